import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, webhookSecretEncryptionKeyEnv, webhookSecretsModule } from '../../lib/constructs/chat-function.ts';
import { httpRoutes, queueConsumers, stateMachines, webSocketRoutes } from '../../lib/routes.ts';
import { resourceEnv } from '../../lib/table.ts';

/**
 * `cdk synth` through the real CLI, offline and without AWS credentials: the app must need no
 * lookups, bundle every handler with the local esbuild (no Docker), and pass the cdk-nag checks.
 */

interface CliResult {
  status: number | null;
  output: string;
  outdir: string;
}

/** The environment of this process without anything that could reach an AWS account. */
function credentialFreeEnvironment(): NodeJS.ProcessEnv {
  const environment = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_') && !name.startsWith('CDK_DEFAULT_')),
  );
  return {
    ...environment,
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    AWS_EC2_METADATA_DISABLED: 'true',
    CDK_DISABLE_VERSION_CHECK: 'true',
    CDK_DISABLE_CLI_TELEMETRY: 'true',
  };
}

/** Stand-ins for the values CloudFormation fills in at deploy time (`Ref`, `Fn::Join`, ...). */
const deployTimeValues: Record<string, string> = {
  [resourceEnv.table]: 'Chat-dev-StorageTable',
  [resourceEnv.eventsQueue]: 'https://sqs.eu-west-1.amazonaws.com/123456789012/Chat-dev-EventsQueue',
  [resourceEnv.realtimeQueue]: 'https://sqs.eu-west-1.amazonaws.com/123456789012/Chat-dev-RealtimeQueue',
  [resourceEnv.connectionsEndpoint]: 'https://abcdef1234.execute-api.eu-west-1.amazonaws.com/prod',
  [resourceEnv.webhookStateMachine]: 'arn:aws:states:eu-west-1:123456789012:stateMachine:WorkflowsWebhookRetry',
  // What the {{resolve:secretsmanager:...}} dynamic reference resolves to: 64 hex characters.
  [webhookSecretEncryptionKeyEnv]: '0123456789abcdef'.repeat(4),
};

/**
 * The `awslambda` global of Lambda's Node.js runtime, as far as handler modules use it at load
 * time; it marks the handlers it wraps, so a test can tell streaming handlers apart.
 */
const awsLambdaGlobalStandIn =
  'globalThis.awslambda = { streamifyResponse: (handler) => Object.assign(handler, { streamingStandIn: true }), HttpResponseStream: { from: (stream) => stream } };';

/** Loads a bundle as the Lambda runtime would and prints `<typeof handler> <streaming?>`. */
const loadHandler = `${awsLambdaGlobalStandIn} const m = await import('./index.mjs'); console.log(typeof m.handler, m.handler?.streamingStandIn === true);`;

interface LambdaFunction {
  Type: string;
  Metadata?: Record<string, string>;
  Properties: { Environment: { Variables: Record<string, unknown> } };
}

interface Template {
  Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
}

let result: CliResult;

const loaded = new Map<string, { status: number | null; stdout: string; stderr: string }>();

/**
 * Loads a function's bundle once, as the Lambda runtime would (module scope runs: config, clients),
 * with the function's environment (deploy-time references replaced by plausible values) and a
 * stand-in for the `awslambda` global the Node.js runtime gives every function.
 */
function loadedHandler(logicalId: string, resource: LambdaFunction): { status: number | null; stdout: string; stderr: string } {
  const cached = loaded.get(logicalId);
  if (cached) return cached;
  const environment: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'not-a-secret',
    AWS_EC2_METADATA_DISABLED: 'true',
  };
  for (const [name, value] of Object.entries(resource.Properties.Environment.Variables)) {
    const concrete = typeof value === 'string' ? value : deployTimeValues[name];
    if (concrete !== undefined) environment[name] = concrete;
  }
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', loadHandler], {
    cwd: path.join(result.outdir, resource.Metadata?.['aws:asset:path'] ?? ''),
    env: environment,
    encoding: 'utf8',
  });
  const outcome = { status: run.status, stdout: run.stdout, stderr: run.stderr };
  loaded.set(logicalId, outcome);
  return outcome;
}

function lambdaFunctions(): Array<[string, LambdaFunction]> {
  const template = JSON.parse(readFileSync(path.join(result.outdir, 'Chat-dev.template.json'), 'utf8')) as {
    Resources: Record<string, LambdaFunction>;
  };
  return Object.entries(template.Resources).filter(([, resource]) => resource.Type === 'AWS::Lambda::Function');
}

beforeAll(() => {
  const outdir = mkdtempSync(path.join(tmpdir(), 'chat-cdk-out-'));
  const run = spawnSync(
    process.execPath,
    [path.join(repoRoot, 'node_modules/aws-cdk/bin/cdk'), 'synth', '--quiet', '--no-notices', '--output', outdir],
    { cwd: repoRoot, env: credentialFreeEnvironment(), encoding: 'utf8', timeout: 230_000 },
  );
  result = { status: run.status, output: `${run.stdout}\n${run.stderr}`, outdir };
}, 240_000);

afterAll(() => {
  if (result) rmSync(result.outdir, { recursive: true, force: true });
});

describe('npx cdk synth', () => {
  it('exits 0 and writes the cloud assembly', () => {
    expect(result.status, result.output).toBe(0);
    expect(existsSync(path.join(result.outdir, 'manifest.json'))).toBe(true);
    expect(existsSync(path.join(result.outdir, 'Chat-dev.template.json'))).toBe(true);
  });

  it('bundles every handler into a self-contained ESM file with a source map', () => {
    const assetDirs = lambdaFunctions()
      .map(([, resource]) => resource.Metadata?.['aws:asset:path'])
      .filter((assetPath): assetPath is string => assetPath !== undefined);

    expect(new Set(assetDirs).size).toBe(
      httpRoutes.length + webSocketRoutes.length + queueConsumers.length + stateMachines.flatMap((machine) => machine.tasks).length,
    );
    for (const assetDir of assetDirs) {
      const files = readdirSync(path.join(result.outdir, assetDir)).sort();
      expect(files).toEqual(['index.mjs', 'index.mjs.map']);
      const code = readFileSync(path.join(result.outdir, assetDir, 'index.mjs'), 'utf8');
      // The #shared/* and #domain/* aliases are resolved at bundle time, and `require` exists in ESM.
      expect(code).not.toMatch(/from\s*["']#(shared|domain)\//);
      expect(code.startsWith("import { createRequire as __chatCreateRequire } from 'node:module';")).toBe(true);
    }
  });

  it('hands the webhook secret encryption key to exactly the bundles that contain the secrets module', () => {
    const mismatches: string[] = [];
    for (const [logicalId, resource] of lambdaFunctions()) {
      const assetDir = path.join(result.outdir, resource.Metadata?.['aws:asset:path'] ?? '');
      const { sources } = JSON.parse(readFileSync(path.join(assetDir, 'index.mjs.map'), 'utf8')) as { sources: string[] };
      const bundled = sources.some((source) => source.replaceAll('\\', '/').endsWith(`functions/${webhookSecretsModule}`));
      const keyed = webhookSecretEncryptionKeyEnv in resource.Properties.Environment.Variables;
      if (bundled !== keyed) mismatches.push(`${logicalId}: bundles secrets ${bundled}, has the key ${keyed}`);
    }
    expect(mismatches).toEqual([]);
  });

  it('starts every bundled handler with exactly the environment its function gets', () => {
    // Prepare / Act: every bundle loaded as the Lambda runtime would
    const failures: string[] = [];
    for (const [logicalId, resource] of lambdaFunctions()) {
      const missing = Object.entries(resource.Properties.Environment.Variables)
        .filter(([name, value]) => typeof value !== 'string' && deployTimeValues[name] === undefined)
        .map(([name]) => name);
      expect(missing, `${logicalId}: deploy-time variables without a stand-in value`).toEqual([]);
      const run = loadedHandler(logicalId, resource);

      // Assess
      if (run.status !== 0 || !run.stdout.trim().startsWith('function ')) {
        failures.push(`${logicalId}: ${run.stderr.split('\n').find((line) => /^\w*Error: /.test(line)) ?? run.stdout}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('streams from exactly the handlers wrapped in awslambda.streamifyResponse (RESPONSE_STREAM function URLs)', () => {
    // Prepare: the functions behind a function URL in RESPONSE_STREAM mode
    const template = JSON.parse(readFileSync(path.join(result.outdir, 'Chat-dev.template.json'), 'utf8')) as Template;
    const streamed = Object.values(template.Resources)
      .filter((resource) => resource.Type === 'AWS::Lambda::Url' && resource.Properties.InvokeMode === 'RESPONSE_STREAM')
      .map((resource) => (resource.Properties.TargetFunctionArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0]);
    expect(streamed).toHaveLength(httpRoutes.filter((route) => route.transport === 'functionUrl').length);

    // Act: the bundles whose handler is a streaming one
    const streaming = lambdaFunctions()
      .filter(([logicalId, resource]) => loadedHandler(logicalId, resource).stdout.trim() === 'function true')
      .map(([logicalId]) => logicalId);

    // Assess
    expect(streaming.sort()).toEqual(streamed.sort());
  }, 120_000);
});
