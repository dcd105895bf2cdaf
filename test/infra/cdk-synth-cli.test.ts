import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { areas, type FunctionEntry, functionEntries, httpRoutes, queues, stateMachines } from '#wiring';
import { type BindingKindId, bindingKinds, bindingVariable, type OutboundHostId, outboundHosts, secretDefinitions } from '#wiring/bindings';
import { bundlesModule } from '../../lib/constructs/handler-modules.ts';
import { bundleBrowserScript } from '../../lib/web-bundle.ts';
import { runCdkCli } from '../support/cdk-cli.ts';
import { deployChecklist } from '../support/deploy-checklist.ts';

/**
 * `cdk synth` through the real CLI, offline and without AWS credentials, as the first-deploy
 * checklist's offline check runs it (docs/operations.md: the deploy command's context keys, with
 * `synth --quiet`): the app must need no lookups, accept the documented keys, bundle every handler
 * with the local esbuild (no Docker) without a line per function, and pass the cdk-nag checks.
 * The functions live in the areas' nested templates, which the root template names by their asset
 * path.
 */

interface CliResult {
  status: number | null;
  output: string;
  outdir: string;
}

/**
 * Stand-ins for the values CloudFormation fills in at deploy time (`Ref`, `Fn::Join`, ...), for every
 * variable a binding of `functions/wiring/bindings.ts` can set: each kind, with every resource of the wiring table
 * it can name. A new kind fails to compile here until it has a stand-in.
 */
const standIns = {
  table: { parameters: ['read', 'write'], value: () => 'Chat-dev-StorageTableB43FDCE7-1ABCDEF' },
  queue: {
    parameters: queues.map((queue) => queue.id),
    value: (id) => `https://sqs.eu-west-1.amazonaws.com/123456789012/Chat-dev-${id}Queue`,
  },
  events: { parameters: ['publish'], value: () => 'arn:aws:sns:eu-west-1:123456789012:Chat-dev-EventTopic57800998-AbCdEf' },
  stateMachine: {
    parameters: stateMachines.map((machine) => machine.id),
    value: (id) => `arn:aws:states:eu-west-1:123456789012:stateMachine:${id}StateMachine-AbCdEf`,
  },
  secret: {
    parameters: Object.keys(secretDefinitions),
    value: (id) => `arn:aws:secretsmanager:eu-west-1:123456789012:secret:chat-dev-${id}-AbCdEf`,
  },
  connections: { parameters: ['manage'], value: () => 'https://abcdef1234.execute-api.eu-west-1.amazonaws.com/prod' },
  outbound: {
    parameters: Object.keys(outboundHosts),
    value: (id) => outboundHosts[id as OutboundHostId].default ?? 'https://provider.example',
  },
  email: { parameters: ['digest'], value: () => 'digest@example.com' },
  link: { parameters: ['api'], value: () => 'https://abcdef1234.execute-api.eu-west-1.amazonaws.com' },
  bucket: { parameters: ['attachments:read', 'attachments:write'], value: () => 'chat-dev-attachmentsbucket-abcdef' },
} satisfies Record<BindingKindId, { parameters: readonly string[]; value: (parameter: string) => string }>;

const deployTimeValues: Record<string, string> = Object.fromEntries(
  (Object.entries(standIns) as Array<[BindingKindId, (typeof standIns)[BindingKindId]]>).flatMap(([kindId, { parameters, value }]) =>
    parameters.map((parameter) => [bindingKinds[kindId].variable(parameter), value(parameter)]),
  ),
);

/**
 * The `awslambda` global of Lambda's Node.js runtime, as far as handler modules use it at load
 * time; it marks the handlers it wraps, so a test can tell streaming handlers apart.
 */
const awsLambdaGlobalStandIn =
  'globalThis.awslambda = { streamifyResponse: (handler) => Object.assign(handler, { streamingStandIn: true }), HttpResponseStream: { from: (stream) => stream } };';

/** Loads a bundle as the Lambda runtime would and prints `<typeof handler> <streaming?>`. */
const loadHandler = `${awsLambdaGlobalStandIn} const m = await import('./index.mjs'); console.log(typeof m.handler, m.handler?.streamingStandIn === true);`;

interface TemplateResource {
  Type: string;
  Metadata?: Record<string, string>;
  Properties: Record<string, any>;
}

interface Template {
  Resources: Record<string, TemplateResource>;
  Parameters?: Record<string, unknown>;
}

/** A function of the assembly, with the wiring-table entry its construct path names. */
interface DeployedFunction {
  /** `<area>/<function id>`. */
  readonly key: string;
  readonly entry: FunctionEntry | undefined;
  readonly resource: TemplateResource;
  /** The values the root passes to the parameters of the function's nested stack. */
  readonly parameterValues: Record<string, unknown>;
  readonly assetDir: string;
}

const checklist = deployChecklist();
/** What `synth --quiet` may print in all; bundling alone printed 486 lines (six per bundle) before it was quieted, and prints them with CHAT_BUNDLING_LOG=1. */
const MAX_SYNTH_LINES = 10;
const stackName = `Chat-${checklist.context.stage ?? 'dev'}`;

let result: CliResult;

const loaded = new Map<string, { status: number | null; stdout: string; stderr: string }>();

const readTemplate = (file: string) => JSON.parse(readFileSync(path.join(result.outdir, file), 'utf8')) as Template;

/** The areas' nested stacks of the root template: their resource and template. */
function nestedStacks(): Array<{ resource: TemplateResource; template: Template }> {
  return (
    Object.values(readTemplate(`${stackName}.template.json`).Resources)
      .filter((resource) => resource.Type === 'AWS::CloudFormation::Stack')
      // Chat-<stage>/<Area>.NestedStack/<Area>.NestedStackResource; the edge's ConsoleSite stack holds CDK's deploy-time copy function only.
      .filter((resource) => areas.some((area) => resource.Metadata?.['aws:cdk:path']?.split('/')[1] === `${area.id}.NestedStack`))
      .map((resource) => ({ resource, template: readTemplate(resource.Metadata?.['aws:asset:path'] as string) }))
  );
}

/** Every Lambda function of every nested template. */
function lambdaFunctions(): DeployedFunction[] {
  return [...areaFunctions(), ...logSubscriberFunctions()];
}

/** The log subscribers, which the root stack holds because every area's log groups point at them (docs/architecture.md). */
function logSubscriberFunctions(): DeployedFunction[] {
  return Object.values(readTemplate(`${stackName}.template.json`).Resources)
    .filter((resource) => resource.Type === 'AWS::Lambda::Function')
    .flatMap((resource) => {
      // Chat-<stage>/<construct>/<FunctionId>/Resource
      const functionId = (resource.Metadata?.['aws:cdk:path'] ?? '').split('/').at(-2);
      const entry = functionEntries.find((candidate) => candidate.kind === 'logSubscriber' && candidate.id === functionId);
      if (!entry) return [];
      return [
        {
          key: `${entry.area}/${entry.id}`,
          entry,
          resource,
          parameterValues: {},
          assetDir: path.join(result.outdir, resource.Metadata?.['aws:asset:path'] ?? ''),
        },
      ];
    });
}

function areaFunctions(): DeployedFunction[] {
  return nestedStacks().flatMap(({ resource: stack, template }) =>
    Object.values(template.Resources)
      .filter((resource) => resource.Type === 'AWS::Lambda::Function')
      .map((resource) => {
        // Chat-<stage>/<Area>/<FunctionId>/Resource
        const [, areaId, functionId] = (resource.Metadata?.['aws:cdk:path'] ?? '').split('/');
        return {
          key: `${areaId}/${functionId}`,
          entry: functionEntries.find((entry) => entry.area === areaId && entry.id === functionId),
          resource,
          parameterValues: (stack.Properties.Parameters ?? {}) as Record<string, unknown>,
          assetDir: path.join(result.outdir, resource.Metadata?.['aws:asset:path'] ?? ''),
        };
      }),
  );
}

/** Whether a function's real bundle contains code of `modulePath` (relative to `functions/`), read from its source map. */
function bundleContains(fn: DeployedFunction, modulePath: string): boolean {
  const { sources } = JSON.parse(readFileSync(path.join(fn.assetDir, 'index.mjs.map'), 'utf8')) as { sources: string[] };
  return sources.some((source) => source.replaceAll('\\', '/').endsWith(`functions/${modulePath}`));
}

/**
 * Loads a function's bundle once, as the Lambda runtime would (module scope runs: config, clients),
 * with the function's environment (deploy-time references replaced by plausible values) and a
 * stand-in for the `awslambda` global the Node.js runtime gives every function.
 */
function loadedHandler(fn: DeployedFunction): { status: number | null; stdout: string; stderr: string } {
  const cached = loaded.get(fn.key);
  if (cached) return cached;
  const environment: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'not-a-secret',
    AWS_EC2_METADATA_DISABLED: 'true',
  };
  for (const [name, value] of Object.entries(fn.resource.Properties.Environment.Variables as Record<string, unknown>)) {
    const concrete = typeof value === 'string' ? value : deployTimeValues[name];
    if (concrete !== undefined) environment[name] = concrete;
  }
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', loadHandler], {
    cwd: fn.assetDir,
    env: environment,
    encoding: 'utf8',
  });
  const outcome = { status: run.status, stdout: run.stdout, stderr: run.stderr };
  loaded.set(fn.key, outcome);
  return outcome;
}

beforeAll(() => {
  const outdir = mkdtempSync(path.join(tmpdir(), 'chat-cdk-out-'));
  // Bundling every function takes about 85 s on an idle machine, minutes on a busy shared one.
  result = { ...runCdkCli([...checklist.synthArgs, '--output', outdir], { timeoutMs: 450_000 }), outdir };
}, 460_000);

afterAll(() => {
  if (result) rmSync(result.outdir, { recursive: true, force: true });
});

describe('deploy-time stand-ins', () => {
  it('cover every variable a binding of functions/wiring/bindings.ts sets', () => {
    const bound = new Set(functionEntries.flatMap((entry) => entry.bindings.map(bindingVariable)));

    expect([...bound].filter((variable) => !(variable in deployTimeValues))).toEqual([]);
    expect(Object.keys(deployTimeValues)).toEqual(
      expect.arrayContaining([
        'TABLE_NAME',
        'REALTIME_QUEUE_URL',
        'EVENTS_TOPIC_ARN',
        'WEBHOOK_RETRY_STATE_MACHINE_ARN',
        'OPERATOR_KEY_SECRET_ARN',
        'WEBHOOK_KEY_SECRET_ARN',
        'SIGNING_KEY_SECRET_ARN',
        'CONNECTIONS_ENDPOINT',
        ...Object.values(outboundHosts).map((host) => host.setting),
      ]),
    );
  });
});

describe('npx cdk synth', () => {
  it('exits 0 and writes the cloud assembly: the root template and one nested template per area', () => {
    expect(result.status, result.output).toBe(0);
    expect(existsSync(path.join(result.outdir, 'manifest.json'))).toBe(true);
    expect(existsSync(path.join(result.outdir, `${stackName}.template.json`))).toBe(true);
    expect(readdirSync(result.outdir).filter((file) => file.endsWith('.nested.template.json'))).toHaveLength(areas.length + 1);
    expect(nestedStacks()).toHaveLength(areas.length);
  });

  it('says little: no line per bundled function, no unconfigured feature flags (CHAT_BUNDLING_LOG=1 brings the bundling lines back)', () => {
    const lines = result.output.split('\n').filter((line) => line.trim() !== '');

    expect(lines.filter((line) => /Bundling asset|index\.mjs|Done in \d/.test(line))).toEqual([]);
    expect(result.output).not.toMatch(/feature flags? (are|is) not configured/);
    expect(lines.length, result.output).toBeLessThanOrEqual(MAX_SYNTH_LINES);
  });

  it('has every function of the wiring table in its area template, and no other', () => {
    const functions = lambdaFunctions();

    expect(functions.map((fn) => fn.key).sort()).toEqual(functionEntries.map((entry) => `${entry.area}/${entry.id}`).sort());
    expect(functions.filter((fn) => fn.entry === undefined)).toEqual([]);
  });

  it('bundles every handler into a self-contained ESM file with a source map', () => {
    const functions = lambdaFunctions();

    expect(new Set(functions.map((fn) => fn.assetDir)).size).toBe(functionEntries.length);
    for (const { assetDir, entry } of functions) {
      const files = readdirSync(assetDir).sort();
      // A route that serves a browser script or a built file has it beside its code (checked below).
      const shipped = [entry?.browserBundle?.file, entry?.builtFile?.file].filter((file) => file !== undefined);
      expect(files).toEqual(['index.mjs', 'index.mjs.map', ...shipped].sort());
      const code = readFileSync(path.join(assetDir, 'index.mjs'), 'utf8');
      // The #shared/* and #domain/* aliases are resolved at bundle time, and `require` exists in ESM.
      expect(code).not.toMatch(/from\s*["']#(shared|domain)\//);
      expect(code.startsWith("import { createRequire as __chatCreateRequire } from 'node:module';")).toBe(true);
    }
  });

  it("ships each route's browser script beside its code: the bytes the local runtime bundles and serves", async () => {
    const serving = lambdaFunctions().filter((fn) => fn.entry?.browserBundle);

    expect(serving.map((fn) => fn.key)).toEqual(['Widget/GetEmbedScript']);
    for (const { assetDir, entry } of serving) {
      const bundle = entry?.browserBundle as NonNullable<FunctionEntry['browserBundle']>;
      const shipped = readFileSync(path.join(assetDir, bundle.file), 'utf8');
      expect(shipped).toBe((await bundleBrowserScript(bundle.entry)).code);
    }
  });

  it("ships each route's built file beside its code: the OpenAPI document of every route, the reference page's script", () => {
    const serving = lambdaFunctions().filter((fn) => fn.entry?.builtFile);

    expect(serving.map((fn) => fn.key).sort()).toEqual(['Ops/GetApiReferenceScript', 'Ops/GetOpenApi']);
    const read = (key: string) => {
      const fn = serving.find((candidate) => candidate.key === key);
      return readFileSync(path.join(fn?.assetDir as string, fn?.entry?.builtFile?.file as string), 'utf8');
    };
    const document = JSON.parse(read('Ops/GetOpenApi')) as { paths: Record<string, Record<string, { operationId: string }>> };
    const described = Object.values(document.paths).flatMap((methods) => Object.values(methods).map((operation) => operation.operationId));
    expect(described.sort()).toEqual(
      functionEntries
        .filter((entry) => entry.kind === 'http')
        .map((entry) => entry.id)
        .sort(),
    );
    expect(read('Ops/GetApiReferenceScript')).toBe(
      readFileSync(new URL('../../node_modules/@scalar/api-reference/dist/browser/standalone.js', import.meta.url), 'utf8'),
    );
  });

  it('binds secret:webhook-key to exactly the functions whose bundle opens webhook secrets (domain/webhooks/secrets.ts)', () => {
    const mismatches: string[] = [];
    for (const fn of lambdaFunctions()) {
      const bundled = bundleContains(fn, 'domain/webhooks/secrets.ts');
      const predicted = bundlesModule(fn.entry?.handler as string, 'domain/webhooks/secrets.ts');
      const bound = fn.entry?.bindings.includes('secret:webhook-key') ?? false;
      if (bundled !== bound || predicted !== bundled)
        mismatches.push(`${fn.key}: bundles ${bundled}, esbuild metafile ${predicted}, bound ${bound}`);
    }

    expect(mismatches).toEqual([]);
    expect(lambdaFunctions().filter((fn) => fn.entry?.bindings.includes('secret:webhook-key')).length).toBeGreaterThan(0);
  });

  it('bundles the Secrets Manager reader (shared/secrets.ts) into every function bound to a secret', () => {
    // Not the converse: every HTTP handler bundles it through functions/edge/http.ts, whose `operator`
    // auth reads the operator key, so the route's auth (checked in chat-stack/least-privilege.test.ts), not the bundle,
    // says which functions read that secret.
    const mismatches: string[] = [];
    for (const fn of lambdaFunctions()) {
      const bundled = bundleContains(fn, 'shared/secrets.ts');
      const bound = fn.entry?.bindings.some((binding) => binding.startsWith('secret:')) ?? false;
      if (bound && !bundled) mismatches.push(`${fn.key}: bound to a secret, but its bundle cannot read one`);
      if (bundlesModule(fn.entry?.handler as string, 'shared/secrets.ts') !== bundled)
        mismatches.push(`${fn.key}: esbuild metafile disagrees`);
    }

    expect(mismatches).toEqual([]);
  });

  it("gives no function a secret's value: only the ARN of each secret it is bound to, as <ID>_SECRET_ARN", () => {
    const root = readTemplate(`${stackName}.template.json`);
    for (const fn of lambdaFunctions()) {
      const variables = fn.resource.Properties.Environment.Variables as Record<string, unknown>;
      const secretBindings = (fn.entry?.bindings ?? []).filter((binding) => binding.startsWith('secret:'));

      expect(
        Object.keys(variables)
          .filter((name) => /SECRET|KEY/.test(name))
          .sort(),
        fn.key,
      ).toEqual(secretBindings.map(bindingVariable).sort());
      expect(JSON.stringify(variables), fn.key).not.toContain('{{resolve:');
      for (const binding of secretBindings) {
        // A parameter of the nested stack, given the root secret's Ref (its ARN).
        const parameter = (variables[bindingVariable(binding)] as { Ref: string }).Ref;
        const rootRef = (fn.parameterValues[parameter] as { Ref: string }).Ref;
        expect(root.Resources[rootRef]?.Type, `${fn.key} ${binding}`).toBe('AWS::SecretsManager::Secret');
        expect(root.Resources[rootRef]?.Properties.Description, `${fn.key} ${binding}`).toContain(
          secretDefinitions[binding.slice('secret:'.length) as keyof typeof secretDefinitions].summary,
        );
      }
    }
  });

  it('starts every bundled handler with exactly the environment its function gets', () => {
    // Prepare / Act: every bundle loaded as the Lambda runtime would
    const failures: string[] = [];
    for (const fn of lambdaFunctions()) {
      const missing = Object.entries(fn.resource.Properties.Environment.Variables as Record<string, unknown>)
        .filter(([name, value]) => typeof value !== 'string' && deployTimeValues[name] === undefined)
        .map(([name]) => name);
      expect(missing, `${fn.key}: deploy-time variables without a stand-in value`).toEqual([]);
      const run = loadedHandler(fn);

      // Assess
      if (run.status !== 0 || !run.stdout.trim().startsWith('function ')) {
        failures.push(`${fn.key}: ${run.stderr.split('\n').find((line) => /^\w*Error: /.test(line)) ?? run.stdout}`);
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);

  it('streams from exactly the handlers wrapped in awslambda.streamifyResponse (RESPONSE_STREAM function URLs)', () => {
    // Prepare: the functions behind a function URL in RESPONSE_STREAM mode, in any area
    const streamed = nestedStacks().flatMap(({ template }) =>
      Object.values(template.Resources)
        .filter((resource) => resource.Type === 'AWS::Lambda::Url' && resource.Properties.InvokeMode === 'RESPONSE_STREAM')
        .map(
          (resource) => template.Resources[(resource.Properties.TargetFunctionArn as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0]],
        )
        .map((resource) => resource?.Metadata?.['aws:cdk:path']?.split('/').slice(1, 3).join('/')),
    );
    expect(streamed).toHaveLength(httpRoutes.filter((route) => route.transport === 'functionUrl').length);

    // Act: the bundles whose handler is a streaming one
    const streaming = lambdaFunctions()
      .filter((fn) => loadedHandler(fn).stdout.trim() === 'function true')
      .map((fn) => fn.key);

    // Assess
    expect(streaming.sort()).toEqual(streamed.sort());
  }, 120_000);
});
