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
  [resourceEnv.connectionsEndpoint]: 'https://abcdef1234.execute-api.eu-west-1.amazonaws.com/prod',
  [resourceEnv.webhookStateMachine]: 'arn:aws:states:eu-west-1:123456789012:stateMachine:WorkflowsWebhookRetry',
  // What the {{resolve:secretsmanager:...}} dynamic reference resolves to: 64 hex characters.
  [webhookSecretEncryptionKeyEnv]: '0123456789abcdef'.repeat(4),
};

interface LambdaFunction {
  Type: string;
  Metadata?: Record<string, string>;
  Properties: { Environment: { Variables: Record<string, unknown> } };
}

let result: CliResult;

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
    const failures: string[] = [];
    for (const [logicalId, resource] of lambdaFunctions()) {
      // Prepare: the function's variables, deploy-time references replaced by plausible values
      const environment: Record<string, string> = {
        PATH: process.env.PATH ?? '',
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
        AWS_SECRET_ACCESS_KEY: 'not-a-secret',
        AWS_EC2_METADATA_DISABLED: 'true',
      };
      for (const [name, value] of Object.entries(resource.Properties.Environment.Variables)) {
        const concrete = typeof value === 'string' ? value : deployTimeValues[name];
        expect(concrete, `${logicalId} ${name}`).toBeDefined();
        environment[name] = concrete as string;
      }

      // Act: load the module as the Lambda runtime would (module scope runs: config, clients)
      const run = spawnSync(
        process.execPath,
        ['--input-type=module', '-e', "const m = await import('./index.mjs'); console.log(typeof m.handler);"],
        { cwd: path.join(result.outdir, resource.Metadata?.['aws:asset:path'] ?? ''), env: environment, encoding: 'utf8' },
      );

      // Assess
      if (run.status !== 0 || run.stdout.trim() !== 'function') {
        failures.push(`${logicalId}: ${run.stderr.split('\n').find((line) => /^\w*Error: /.test(line)) ?? run.stdout}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);
});
