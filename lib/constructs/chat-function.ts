import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type { WebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { type Grant, Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Architecture, Runtime, Tracing } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct } from 'constructs';
import type { Access } from '../routes.ts';
import { resourceEnv } from '../table.ts';
import { bundlesModule } from './handler-modules.ts';
import { acknowledgeWildcardResources } from './nag.ts';

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

/** `POWERTOOLS_SERVICE_NAME` of every function unless set otherwise: the `service` dimension of its metrics. */
export const defaultServiceName = 'chat';

/** Environment variable of the key that encrypts webhook signing secrets at rest (`functions/shared/config.ts`). */
export const webhookSecretEncryptionKeyEnv = 'WEBHOOK_SECRET_ENCRYPTION_KEY';

/**
 * The module that seals and opens webhook signing secrets. A function whose handler imports it,
 * directly or through other modules, gets {@link webhookSecretEncryptionKeyEnv}.
 */
export const webhookSecretsModule = 'domain/webhooks/secrets.ts';

/**
 * The access kinds that send to a queue: which {@link ChatResources} queue each one names and the
 * variable that carries its URL (`lib/table.ts`). One entry per kind, so `realtime:send` is wired
 * exactly as `events:send` is.
 */
export const queueSendAccess = {
  'events:send': { resource: 'eventsQueue', variable: resourceEnv.eventsQueue },
  'realtime:send': { resource: 'realtimeQueue', variable: resourceEnv.realtimeQueue },
} as const satisfies Partial<Record<Access, { resource: keyof ChatResources; variable: string }>>;

/** How much of the table a function may touch. */
export type TableAccess = 'read' | 'write' | 'readWrite';

/** The shared resources a route's `access` list refers to (`lib/routes.ts`). */
export interface ChatResources {
  /** The single table (`table:read`, `table:write`). */
  readonly table: ITableV2;
  /** The domain events queue (`events:send`). */
  readonly eventsQueue: IQueue;
  /** The realtime jobs queue: welcome frames and fan-out batches (`realtime:send`). */
  readonly realtimeQueue: IQueue;
  /**
   * The WebSocket stage whose connections handlers post to (`connections:manage`).
   * @default - a route asking for `connections:manage` fails the synth
   */
  readonly webSocketStage?: WebSocketStage;
  /**
   * The webhook retry state machine (`webhooks:start`).
   * @default - a route asking for `webhooks:start` fails the synth
   */
  readonly webhookStateMachine?: IStateMachine;
  /**
   * The secret holding the webhook secret encryption key (64 hex characters). Functions whose
   * handler bundles `functions/domain/webhooks/secrets.ts` get it as `WEBHOOK_SECRET_ENCRYPTION_KEY`,
   * whatever their `access` list says: sealing and opening must use the same key everywhere.
   * @default - no key: webhook secrets are stored in plaintext
   */
  readonly webhookSecretEncryptionKey?: ISecret;
}

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
}

/**
 * A Lambda function running one handler of `functions/`, with the service defaults fixed once:
 * Node.js 22 on ARM64, an ESM bundle built locally by esbuild (minified, with source maps, the
 * `#shared/*` and `#domain/*` aliases resolved from `package.json`), an explicit log group with
 * retention, active tracing, and a role that may only write to that log group until a `bind*`
 * method grants more.
 *
 * The log group and role are created next to the function (as `<id>LogGroup` and `<id>Role`),
 * because they must exist before the function's constructor runs.
 */
export class ChatFunction extends NodejsFunction {
  /** Handler module relative to `functions/`. */
  public readonly handlerPath: string;
  /** The function's log group (retention and removal policy set explicitly). */
  public readonly logGroupOfFunction: LogGroup;
  /** The execution role: writes to its own log group, plus whatever the `bind*` methods grant. */
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
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(10),
      tracing: Tracing.ACTIVE,
      logGroup,
      role,
      projectRoot: repoRoot,
      depsLockFilePath: path.join(repoRoot, 'package-lock.json'),
      environment: {
        NODE_OPTIONS: '--enable-source-maps',
        POWERTOOLS_SERVICE_NAME: props.serviceName ?? defaultServiceName,
        ...props.environment,
      },
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
      },
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

  /** Sets `TABLE_NAME` and grants the narrowest data-plane access to the table for `mode`. */
  public bindTable(table: ITableV2, mode: TableAccess): void {
    this.addEnvironment(resourceEnv.table, table.tableName);
    let grant: Grant;
    if (mode === 'read') grant = table.grantReadData(this);
    else if (mode === 'write') grant = table.grantWriteData(this);
    else grant = table.grantReadWriteData(this);
    acknowledgeWildcardResources(
      this.executionRole,
      grant,
      'The table grant covers "<table ARN>/index/*": the table\'s own GSIs (gsi1 for inverted lookups), ' +
        "no other table. Index ARNs are the only wildcard and the actions are the grant's minimal data-plane set.",
    );
  }

  /**
   * Sets `variable` (`EVENTS_QUEUE_URL` unless given) to the queue's URL and grants sending to
   * (only) that queue.
   */
  public bindQueue(queue: IQueue, variable: string = resourceEnv.eventsQueue): void {
    this.addEnvironment(variable, queue.queueUrl);
    queue.grantSendMessages(this);
  }

  /**
   * Sets `CONNECTIONS_ENDPOINT` to the stage's https callback URL and grants
   * `execute-api:ManageConnections` on that stage's `@connections` only.
   */
  public bindConnections(stage: WebSocketStage): void {
    this.addEnvironment(resourceEnv.connectionsEndpoint, stage.callbackUrl);
    const grant = stage.grantManagementApiAccess(this);
    acknowledgeWildcardResources(
      this.executionRole,
      grant,
      'execute-api:ManageConnections on "<api>/<stage>/*/@connections/*": connection ids are created at runtime ' +
        'by API Gateway, so the ARN cannot name them; it is limited to this API and stage.',
    );
  }

  /**
   * Sets `WEBHOOK_STATE_MACHINE_ARN` and grants `states:StartExecution` on (only) that state machine.
   */
  public bindWebhookStateMachine(stateMachine: IStateMachine): void {
    this.addEnvironment(resourceEnv.webhookStateMachine, stateMachine.stateMachineArn);
    stateMachine.grantStartExecution(this);
  }

  /**
   * Sets `WEBHOOK_SECRET_ENCRYPTION_KEY` to a CloudFormation dynamic reference to the secret's
   * current value (`{{resolve:secretsmanager:...}}`): CloudFormation resolves it when it deploys the
   * function, so the template and the cloud assembly never contain the key, and the function needs
   * no Secrets Manager permission. The resolved value is a plain environment variable of the
   * function (readable with `lambda:GetFunctionConfiguration`); see docs/operations.md.
   */
  public bindWebhookSecretEncryptionKey(secret: ISecret): void {
    this.addEnvironment(webhookSecretEncryptionKeyEnv, secret.secretValue.unsafeUnwrap());
  }

  /**
   * Turns a wiring-table entry's `access` list (`lib/routes.ts`) into grants and environment
   * variables: the one place where `table:read` means `grantReadData`, `events:send` and
   * `realtime:send` mean `grantSendMessages` on their queue ({@link queueSendAccess}), and so on.
   * Used for HTTP and WebSocket routes, queue consumers and state machine tasks alike. Also hands
   * the webhook secret encryption key to every function whose handler bundles {@link webhookSecretsModule}.
   */
  public grantAccess(access: readonly Access[], resources: ChatResources): void {
    const tableMode = tableAccessFor(access);
    if (tableMode) this.bindTable(resources.table, tableMode);
    for (const [kind, { resource, variable }] of Object.entries(queueSendAccess)) {
      if (access.includes(kind as Access)) this.bindQueue(resources[resource], variable);
    }
    if (access.includes('connections:manage')) {
      if (!resources.webSocketStage) {
        throw new Error(`${this.node.path} needs connections:manage but no WebSocket stage was given`);
      }
      this.bindConnections(resources.webSocketStage);
    }
    if (access.includes('webhooks:start')) {
      if (!resources.webhookStateMachine) {
        throw new Error(`${this.node.path} needs webhooks:start but no webhook state machine was given`);
      }
      this.bindWebhookStateMachine(resources.webhookStateMachine);
    }
    if (resources.webhookSecretEncryptionKey && bundlesModule(this.handlerPath, webhookSecretsModule)) {
      this.bindWebhookSecretEncryptionKey(resources.webhookSecretEncryptionKey);
    }
  }
}

/** The table access an `access` list implies, or `undefined` when it names no table access. */
export function tableAccessFor(access: readonly Access[]): TableAccess | undefined {
  const read = access.includes('table:read');
  const write = access.includes('table:write');
  if (read && write) return 'readWrite';
  if (write) return 'write';
  if (read) return 'read';
  return undefined;
}
