import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { AssetStaging, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { PolicyStatement, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { type BundlingOptions, LogLevel, NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { BrowserBundle, BuiltFile } from '#wiring';
import { type Binding, type BoundResources, type GrantContext, parseBinding } from '#wiring/bindings';
import { writeBuiltFileSync } from '../built-files.ts';
import { bundlingLogRequested } from '../bundling-log.ts';
import { bundleBrowserScriptSync } from '../web-bundle.ts';
import { acknowledgeWildcardResources, acknowledgeWildcardStatements } from './nag.ts';

/** Repository root: the esbuild project root, where `package.json` ("imports" aliases) and the lock file live. */
export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Directory of the handler modules; route `handler` paths are relative to it. */
export const functionsDir = path.join(repoRoot, 'functions');

/**
 * ESM bundles have no `require`; a few CommonJS dependencies call it for Node built-ins. The alias
 * keeps the banner's import from colliding with a `createRequire` import esbuild may emit itself.
 */
const esmRequireBanner =
  "import { createRequire as __chatCreateRequire } from 'node:module'; const require = __chatCreateRequire(import.meta.url);";

/**
 * Packages replaced in the bundles (esbuild `alias`, paths from the repository root): Lambda's
 * credentials are in the environment, so the SDK's default credential chain shrinks to that link
 * (`functions/shared/lambda-credentials.ts`), about 115 KB off every bundle; and `web-push`'s proxy
 * agent, which the service never uses (`functions/shared/no-proxy-agent.ts`).
 */
const bundleAliases = {
  '@aws-sdk/credential-provider-node': './functions/shared/lambda-credentials.ts',
  'https-proxy-agent': './functions/shared/no-proxy-agent.ts',
};

/**
 * How every {@link ChatFunction} is built and started: the `bundling` props it gives NodejsFunction
 * (esbuild, run locally; `aliases` reach it as `esbuildArgs`) and the `NODE_OPTIONS` it sets.
 * Exported so that the bundle-size test and the benchmark build exactly what `cdk deploy` ships.
 */
export const chatFunctionBuild = {
  aliases: bundleAliases,
  bundling: {
    minify: true,
    sourceMap: true,
    format: OutputFormat.ESM,
    target: 'node22',
    mainFields: ['module', 'main'],
    banner: esmRequireBanner,
    // The SDK versions in package-lock.json are the ones the tests ran against; the runtime's
    // built-in SDK may lag or lead them.
    bundleAwsSDK: true,
    forceDockerBundling: false,
    // esbuild's own default prints a size summary per bundle: hundreds of lines per synth (lib/bundling-log.ts).
    logLevel: bundlingLogRequested() ? LogLevel.INFO : LogLevel.WARNING,
    esbuildArgs: Object.fromEntries(Object.entries(bundleAliases).map(([from, to]) => [`--alias:${from}`, to])),
  } satisfies BundlingOptions,
  nodeOptions: '--enable-source-maps',
};

/** Memory of every function unless set otherwise; Lambda bills duration per GB-second of it. */
export const defaultMemorySizeMb = 512;

/** `POWERTOOLS_SERVICE_NAME` of every function unless set otherwise: the `service` dimension of its metrics. */
export const defaultServiceName = 'chat';

/** Properties of a {@link ChatFunction}. */
export interface ChatFunctionProps {
  /** Handler module relative to `functions/` (for example `http/rooms/create-room.ts`); it exports `handler`. */
  readonly handlerPath: string;
  /**
   * A description shown in the Lambda console.
   * @default - no description
   */
  readonly description?: string;
  /**
   * Memory in MiB; CPU scales with it.
   * @default 512
   */
  readonly memorySize?: number;
  /**
   * Maximum run time of one invocation. API Gateway gives up after 29 s (HTTP) anyway.
   * @default Duration.seconds(10)
   */
  readonly timeout?: Duration;
  /**
   * `POWERTOOLS_SERVICE_NAME`: the `service` field of every log line and metric.
   * @default defaultServiceName ('chat')
   */
  readonly serviceName?: string;
  /**
   * Extra environment variables (shared configuration); resource variables come from the `bind*` methods.
   * @default - none
   */
  readonly environment?: Record<string, string>;
  /**
   * How long the function's log group keeps events.
   * @default RetentionDays.ONE_MONTH
   */
  readonly logRetention?: RetentionDays;
  /**
   * What happens to the log group when the function is removed from the stack.
   * @default RemovalPolicy.DESTROY
   */
  readonly logRemovalPolicy?: RemovalPolicy;
  /**
   * Concurrent executions reserved for the function, which also caps it.
   * @default - none: the function draws on the account's unreserved pool
   */
  readonly reservedConcurrentExecutions?: number;
  /**
   * A browser script the handler serves, written into the function's asset beside its code.
   * @default - none
   */
  readonly browserBundle?: BrowserBundle;
  /**
   * A built file the handler serves (the OpenAPI document, a package's file), written into the
   * function's asset beside its code as the browser script is.
   * @default - none
   */
  readonly builtFile?: BuiltFile;
}

/**
 * Bundling that also writes a browser script into the asset. NodejsFunction asks its hooks for
 * commands twice: at construction for a Docker build (paths under `/asset-output`), which never runs
 * here (`forceDockerBundling: false`, esbuild is installed), and in `tryBundle` for the local build
 * with the real output folder, only when the asset is really bundled. That second call writes the
 * script itself, in this process, with the same esbuild as `lib/web-bundle.ts` serves locally; a
 * Docker build would fail on purpose rather than ship a function without its script. The asset's
 * hash covers its output, so a changed script deploys a new version.
 */
function bundlingWith(browserBundle: BrowserBundle | undefined, builtFile: BuiltFile | undefined): BundlingOptions {
  if (!browserBundle && !builtFile) return chatFunctionBuild.bundling;
  const files = [browserBundle?.file, builtFile?.file].filter(Boolean).join(' and ');
  return {
    ...chatFunctionBuild.bundling,
    commandHooks: {
      beforeBundling: () => [],
      beforeInstall: () => [],
      afterBundling: (_inputDir, outputDir) => {
        if (outputDir === AssetStaging.BUNDLING_OUTPUT_DIR) return [`echo "${files} is written by local bundling only" >&2`, 'exit 1'];
        if (browserBundle) writeFileSync(path.join(outputDir, browserBundle.file), bundleBrowserScriptSync(browserBundle.entry).code);
        if (builtFile) writeBuiltFileSync(builtFile, outputDir);
        return [];
      },
    },
  };
}

/**
 * A Lambda function running one handler of `functions/`, with the service defaults fixed once:
 * Node.js 22 on ARM64, an ESM bundle built locally by esbuild (minified, with source maps, the
 * `#shared/*` and `#domain/*` aliases resolved from `package.json`), an explicit log group with
 * retention, active tracing, and a role that may only write to that log group until `bind`
 * grants more.
 *
 * The log group and role are created next to the function (as `<id>LogGroup` and `<id>Role`),
 * because they must exist before the function's constructor runs.
 */
export class ChatFunction extends NodejsFunction {
  /** Handler module relative to `functions/`. */
  public readonly handlerPath: string;
  /** The function's log group (retention and removal policy set explicitly). */
  public readonly logGroupOfFunction: LogGroup;
  /** The execution role: writes to its own log group, plus whatever `bind` grants. */
  public readonly executionRole: Role;

  constructor(scope: Construct, id: string, props: ChatFunctionProps) {
    const logGroup = new LogGroup(scope, `${id}LogGroup`, {
      retention: props.logRetention ?? RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy ?? RemovalPolicy.DESTROY,
    });
    // Own role instead of the default one: the default attaches the AWSLambdaBasicExecutionRole
    // managed policy (logs:* on every log group); this one may write to its own log group only.
    const role = new Role(scope, `${id}Role`, {
      assumedBy: new ServicePrincipal('lambda.amazonaws.com'),
      description: `Execution role of ${id}`,
    });
    logGroup.grantWrite(role);

    super(scope, id, {
      entry: path.join(functionsDir, props.handlerPath),
      handler: 'handler',
      description: props.description,
      runtime: Runtime.NODEJS_22_X,
      architecture: Architecture.ARM_64,
      memorySize: props.memorySize ?? defaultMemorySizeMb,
      timeout: props.timeout ?? Duration.seconds(10),
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      tracing: Tracing.ACTIVE,
      logGroup,
      role,
      projectRoot: repoRoot,
      depsLockFilePath: path.join(repoRoot, 'package-lock.json'),
      environment: {
        NODE_OPTIONS: chatFunctionBuild.nodeOptions,
        POWERTOOLS_SERVICE_NAME: props.serviceName ?? defaultServiceName,
        ...props.environment,
      },
      bundling: bundlingWith(props.browserBundle, props.builtFile),
    });
    this.handlerPath = props.handlerPath;
    this.logGroupOfFunction = logGroup;
    this.executionRole = role;

    Validations.of(this).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'nodejs22.x is pinned on purpose: the same handlers run on the local Node 20/22 runtime and the tests; ' +
        'moving to a newer runtime is a deliberate upgrade, not a default.',
    });
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Active tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords, which support no resource-level ' +
        'permissions (the X-Ray service authorization reference lists only "*").',
    });
  }

  /**
   * Binds the function to the resources its wiring-table entry names (`functions/wiring/bindings.ts`): for each,
   * the kind's least-privilege grant and its environment variable. The one place where a binding
   * becomes IAM.
   */
  public bind(bindings: readonly Binding[], resources: BoundResources, settings: Readonly<Record<string, string | undefined>> = {}): void {
    const context: GrantContext = {
      resources,
      settings,
      grantee: this,
      allow: (actions, resourceArns, wildcardReason) => {
        const statement = new PolicyStatement({ actions: [...actions], resources: [...resourceArns] });
        this.addToRolePolicy(statement);
        if (wildcardReason) acknowledgeWildcardStatements(this.executionRole, [statement], wildcardReason);
      },
      acknowledgeWildcards: (grant, reason) => acknowledgeWildcardResources(this.executionRole, grant, reason),
      acknowledgeFinding: (id, reason) => Validations.of(this.executionRole).acknowledge({ id, reason }),
      arnOf: (service, resource) => Stack.of(this).formatArn({ service, resource }),
    };
    for (const binding of new Set(bindings)) {
      const { kind, parameter } = parseBinding(binding);
      const value = kind.grant(parameter, context);
      if (value !== undefined) this.addEnvironment(kind.variable(parameter), value);
    }
  }
}
