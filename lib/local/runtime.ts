import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiGatewayManagementApiClient } from '@aws-sdk/client-apigatewaymanagementapi';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { functionEntries, streamConsumers } from '#wiring';
import { type LocalStandIns, parseBinding, type SecretId, secretDefinitions } from '#wiring/bindings';
import { startDynamoDbLocal } from './dynamodb-local';
import { type Gateway, startGateway } from './gateway';
import { HandlerHost } from './handlers';
import { inProcessRequestHandler } from './in-process-handler';
import { faultsFromSettings, type ManagementFaults, type ManagementStats, managementResponder } from './management-api';
import { type QueueConsumerStats, type QueueConsumers, startQueueConsumers } from './queue-consumers';
import { startSecretsLocal } from './secrets-local';
import { LOCAL_REGION, startSqsLocal } from './sqs-local';
import { type StepFunctionsStats, startLocalStepFunctions } from './step-functions';
import { type StreamPoller, type StreamPollerStats, startStreamPoller } from './stream-poller';
import { type SwitchableProxy, startSwitchableProxy } from './switchable-proxy';
import { ensureTable } from './table';

export const LOCAL_TABLE_NAME = 'chat';
// The local runtime runs on Node 20 on purpose (Lambda runs 22); the SDK's upgrade notice is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface LocalRuntimeOptions {
  /** Gateway port; 0 picks a free one. @default 8787 */
  readonly port?: number;
  /** Folder for DynamoDB Local's files (and the stream position); `undefined` runs in memory. */
  readonly dataDir?: string;
  /**
   * Settings (`RATE_LIMIT_MESSAGES_PER_MINUTE`, provider URLs, ...) and secret values
   * (`CHAT_OPERATOR_KEY`, `WEBHOOK_SECRET_ENCRYPTION_KEY`: served by the secrets stand-in, never
   * handed to handlers as settings).
   */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * The functions fed by a queue or the table stream to run: all (`true`), none, or those whose ids
   * are listed; `startConsumers()` starts the rest later (benchmarks measure with and without).
   * @default true
   */
  readonly consumers?: boolean | readonly string[];
  /**
   * Serve `POST /_local/fan-out` on the gateway, which takes the event fan-out down and up (outage
   * tests of processes that cannot reach this object).
   * @default false
   */
  readonly controls?: boolean;
  /**
   * How handlers reach `@connections`: `direct` hands each frame to the gateway's socket; `sdk`
   * runs the SDK client (serialise, sign, parse) without a socket; `http` is the real HTTP + SigV4
   * path API Gateway serves. All three go through the same rules, counters and faults.
   * @default `LOCAL_CONNECTIONS_TRANSPORT`, else `direct`
   */
  readonly connectionsTransport?: ConnectionsTransportKind;
  /** @default from `LOCAL_CONNECTIONS_GONE_RATE`, `LOCAL_CONNECTIONS_THROTTLE_RATE`, `LOCAL_CONNECTIONS_JITTER_MS` */
  readonly connectionsFaults?: ManagementFaults;
  /** Setup that must be done before `GET /health` says ready (the demo project of `npm start`). */
  readonly beforeReady?: () => Promise<void>;
}

export const connectionsTransportKinds = ['direct', 'sdk', 'http'] as const;
export type ConnectionsTransportKind = (typeof connectionsTransportKinds)[number];

export interface LocalRuntime {
  readonly baseUrl: string;
  readonly gateway: Gateway;
  readonly dynamoEndpoint: string;
  readonly sqsEndpoint: string;
  readonly tableName: string;
  /** Queue URL by queue id (shared queues and event subscribers) and `<id>DeadLetter`. */
  readonly queueUrls: Readonly<Record<string, string>>;
  readonly eventTopicArn: string;
  /** The settings handed to the handlers, for processes (tests, CLI) that talk to the same stand-ins. */
  readonly env: Readonly<Record<string, string>>;
  /** The event fan-out as the publisher reaches it: stop it to simulate an SNS outage, start it to end one. */
  readonly fanOut: Pick<SwitchableProxy, 'stop' | 'start' | 'running'>;
  /** Counters a deployed stack would see in CloudWatch: metrics emitted and Step Functions work. */
  stats(): LocalStats;
  /** Starts the consumers that `consumers` held back. */
  startConsumers(): void;
  /** Resolves once the stream consumers have taken every record written before the call. */
  drainStream(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export interface LocalStats {
  readonly metrics: Readonly<Record<string, number>>;
  readonly stepFunctions: StepFunctionsStats;
  /** Zeros until the consumers start. */
  readonly queueConsumers: QueueConsumerStats;
  readonly stream: StreamPollerStats;
  /** `@connections` calls: what API Gateway would bill as WebSocket messages sent. */
  readonly connections: ManagementStats;
  /** Every handler invocation and its wall time (Lambda's `Invocations` and `Duration`). */
  readonly lambda: { readonly invocations: number; readonly durationMs: number; readonly running: number };
}

const zeroStreamStats: StreamPollerStats = {
  getRecordsRequests: 0,
  invocations: 0,
  recordsDelivered: 0,
  recordsFilteredOut: 0,
  retries: 0,
};

function sum<T extends object>(parts: readonly (T | undefined)[], zero: T): T {
  const total = { ...zero } as Record<string, number>;
  for (const part of parts) {
    if (!part) continue;
    for (const [key, value] of Object.entries(part)) total[key] = (total[key] ?? 0) + (value as number);
  }
  return total as T;
}

/** The setting each secret's local value comes from (`CHAT_OPERATOR_KEY` for `operator-key`). */
const secretSettings = new Map(
  Object.entries(secretDefinitions).map(([secretId, definition]) => [definition.setting, secretId as SecretId]),
);

/**
 * Starts the whole service on one machine: DynamoDB Local with its stream poller, the SQS/SNS
 * stand-in (behind a switch for the publisher), the secrets stand-in, the Step Functions
 * interpreter, the queue consumers and the gateway, with the handler modules running in this
 * process against them through the real AWS SDK clients. Each handler's resources arrive as the
 * variables of its bindings (`functions/wiring/bindings.ts`), with the stand-ins' values. Handlers read their
 * settings from `process.env` when first imported, so this sets them before any handler loads:
 * one runtime per process.
 */
export async function startLocalRuntime(options: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  const given = { ...options.env };
  const secretValues: Partial<Record<SecretId, string>> = {};
  for (const [setting, secretId] of secretSettings) {
    const value = given[setting] ?? process.env[setting];
    if (value) secretValues[secretId] = value;
    delete given[setting];
  }
  // The keys the service generates are never stored in plain, so this secret always exists: made
  // here when not given, as Secrets Manager makes it on AWS, and kept beside the data it opens.
  secretValues['signing-key'] ??= localSigningKey(options.dataDir);
  // Refused now, naming the setting, rather than at the first request that reads the secret.
  const { checkSecretFormat } = await import('../../functions/shared/secret-formats');
  for (const [secretId, value] of Object.entries(secretValues) as [SecretId, string][]) {
    try {
      checkSecretFormat(secretId, value);
    } catch (error) {
      throw new Error(`${secretDefinitions[secretId].setting}: ${(error as Error).message}`);
    }
  }

  // Fresh per run: the local `@connections` API admits only requests signed with this key.
  const credentials = {
    accessKeyId: `AKIALOCAL${randomBytes(8).toString('hex').toUpperCase()}`,
    secretAccessKey: randomBytes(30).toString('base64url'),
  };
  const handlers = new HandlerHost(join(repoRoot, 'functions'));
  const [dynamo, sqs, stepFunctions, secrets] = await Promise.all([
    startDynamoDbLocal({ dataDir: options.dataDir }),
    startSqsLocal(),
    startLocalStepFunctions({ repoRoot, handlers }),
    startSecretsLocal(secretValues),
  ]);
  let gateway: Gateway | undefined;
  let fanOut: SwitchableProxy | undefined;
  const started: { queues: QueueConsumers[]; streams: StreamPoller[] } = { queues: [], streams: [] };
  const metrics: Record<string, number> = {};
  const stats = (): LocalStats => ({
    metrics: { ...metrics },
    stepFunctions: stepFunctions.stats(),
    queueConsumers: sum(
      started.queues.map((consumers) => consumers.stats()),
      { receiveRequests: 0, nonEmptyReceives: 0, deleteRequests: 0, invocations: 0, messages: 0 },
    ),
    stream: sum(
      started.streams.map((poller) => poller.stats()),
      zeroStreamStats,
    ),
    connections: gateway?.managementStats() ?? { posts: 0, gone: 0, deletes: 0, throttled: 0 },
    lambda: handlers.stats(),
  });
  const stopAll = async () => {
    await Promise.all([...started.queues, ...started.streams].map((running) => running.stop()));
    await gateway?.stop();
    await stepFunctions.stop();
    await fanOut?.close();
    await Promise.all([dynamo.stop(), sqs.stop(), secrets.stop()]);
  };
  try {
    fanOut = await startSwitchableProxy(sqs.endpoint);
    const settings = { ...process.env, ...given };
    gateway = await startGateway({
      port: options.port ?? 8787,
      handlers,
      managementAccessKeyId: credentials.accessKeyId,
      managementFaults: options.connectionsFaults ?? faultsFromSettings(settings),
      localStats: stats,
      ...(options.controls ? { fanOutSwitch: fanOut } : {}),
    });
    const standIns: LocalStandIns = {
      tableName: LOCAL_TABLE_NAME,
      queueUrls: sqs.queueUrls,
      eventTopicArn: sqs.eventTopicArn,
      stateMachineArns: stepFunctions.arns,
      secretArns: secrets.arns,
      connectionsEndpoint: gateway.baseUrl,
      settings,
    };
    const env: Record<string, string> = {
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_SQS: sqs.endpoint,
      // Only the event publisher talks to SNS: through the switch, so the fan-out can be taken down.
      AWS_ENDPOINT_URL_SNS: fanOut.endpoint,
      AWS_ENDPOINT_URL_SFN: stepFunctions.endpoint,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint,
      ...bindingVariables(standIns),
      // Webhook receivers on one machine live on loopback.
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN',
      ...given,
    };
    Object.assign(process.env, env);
    // Credentials from the user's AWS profile must not leak into local requests.
    delete process.env.AWS_SESSION_TOKEN;
    delete process.env.AWS_PROFILE;
    // Before any handler module builds its clients.
    const { sdkClientDefaults, sqsClientDefaults } = await import('#shared/aws-clients');
    sdkClientDefaults.signer = keyNamingSigner(credentials.accessKeyId);
    sqsClientDefaults.requestHandler = sqs.requestHandler;
    // Validate the settings now, so a bad one stops the start instead of the first request.
    await import('#shared/config');
    await useConnectionsTransport(options.connectionsTransport ?? transportKindFrom(settings), gateway, credentials);
    const { addMetricSink } = await import('#shared/metrics');
    addMetricSink((name, value) => {
      metrics[name] = (metrics[name] ?? 0) + value;
    });

    const admin = new DynamoDBClient({ endpoint: dynamo.endpoint, region: LOCAL_REGION });
    await ensureTable(admin, LOCAL_TABLE_NAME);
    admin.destroy();

    const chosen = options.consumers ?? true;
    const early = Array.isArray(chosen) ? chosen : [];
    const launch = async (selection: { only?: readonly string[]; except?: readonly string[] }) => {
      const picked = (id: string) => (!selection.only || selection.only.includes(id)) && !selection.except?.includes(id);
      started.queues.push(
        startQueueConsumers({
          sqsEndpoint: sqs.endpoint,
          requestHandler: sqs.requestHandler,
          signer: keyNamingSigner(credentials.accessKeyId),
          queueUrls: sqs.queueUrls,
          handlers,
          ...selection,
        }),
      );
      const streamed = streamConsumers.filter((consumer) => picked(consumer.id));
      if (streamed.length > 0) {
        started.streams.push(
          await startStreamPoller({
            dynamoEndpoint: dynamo.endpoint,
            tableName: LOCAL_TABLE_NAME,
            consumers: streamed,
            handlers,
            checkpointFile: options.dataDir ? join(options.dataDir, 'stream-checkpoints.json') : undefined,
          }),
        );
      }
    };
    if (early.length > 0) await launch({ only: early });
    let rest: Promise<void> | undefined;
    const startConsumers = () => {
      rest ??= launch({ except: early });
    };
    if (chosen === true) {
      startConsumers();
      await rest;
    }
    await options.beforeReady?.();
    gateway.markReady();

    return {
      baseUrl: gateway.baseUrl,
      gateway,
      dynamoEndpoint: dynamo.endpoint,
      sqsEndpoint: sqs.endpoint,
      tableName: LOCAL_TABLE_NAME,
      queueUrls: sqs.queueUrls,
      eventTopicArn: sqs.eventTopicArn,
      env,
      fanOut,
      stats,
      startConsumers,
      drainStream: async (timeoutMs) => {
        await Promise.all(started.streams.map((poller) => poller.drain(timeoutMs)));
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** A data folder's own signing key (created on its first run), or a throwaway one for a run in memory. */
function localSigningKey(dataDir: string | undefined): string {
  if (!dataDir) return randomBytes(32).toString('hex');
  const file = join(dataDir, 'signing-key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString('hex');
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}

/** The variable of every binding in the wiring table, with its stand-in's value. */
function bindingVariables(standIns: LocalStandIns): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const entry of functionEntries) {
    for (const binding of entry.bindings) {
      const { kind, parameter } = parseBinding(binding);
      const value = kind.local(parameter, standIns);
      if (value !== undefined) variables[kind.variable(parameter)] = value;
    }
  }
  return variables;
}

function transportKindFrom(settings: Readonly<Record<string, string | undefined>>): ConnectionsTransportKind {
  const kind = settings.LOCAL_CONNECTIONS_TRANSPORT || 'direct';
  if (!(connectionsTransportKinds as readonly string[]).includes(kind)) {
    throw new Error(`LOCAL_CONNECTIONS_TRANSPORT must be one of ${connectionsTransportKinds.join(', ')}, not ${kind}`);
  }
  return kind as ConnectionsTransportKind;
}

/** Points the handlers of this process at the gateway's `@connections` by the chosen path. */
async function useConnectionsTransport(
  kind: ConnectionsTransportKind,
  gateway: Gateway,
  credentials: { accessKeyId: string; secretAccessKey: string },
): Promise<void> {
  // `http`: the handlers' own SDK client, over a socket to the gateway, as on AWS.
  if (kind === 'http') return;
  const shared = await import('#shared/gateway');
  if (kind === 'direct') return shared.useConnectionsTransport(gateway.directTransport);
  const client = new ApiGatewayManagementApiClient({
    endpoint: gateway.baseUrl,
    region: LOCAL_REGION,
    credentials,
    requestHandler: inProcessRequestHandler(managementResponder(gateway.manageRequest)),
  });
  shared.useConnectionsTransport(shared.sdkTransport(client));
}

/**
 * A SigV4 signer that names the access key and signs nothing. The stand-ins check no signature
 * (DynamoDB Local wants an `Authorization` header naming a key, nothing more), and on AWS the
 * signing CPU is the SDK's, not the service's: measured locally it would be charged to the service.
 */
function keyNamingSigner(accessKeyId: string) {
  const authorization = `AWS4-HMAC-SHA256 Credential=${accessKeyId}/20000101/${LOCAL_REGION}/local/aws4_request, SignedHeaders=host, Signature=0`;
  return {
    sign: async <T extends { headers: Record<string, string> }>(request: T): Promise<T> => {
      request.headers.authorization = authorization;
      return request;
    },
  };
}
