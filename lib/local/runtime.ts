import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { httpRoutes, logSubscribers, schedules } from '#wiring';
import type { LocalStandIns, SecretId } from '#wiring/bindings';
import { startDemoSession } from './demo-session';
import { startFiguresFeed } from './figures-feed';
import { type Gateway, startGateway } from './gateway';
import { HandlerHost } from './handlers';
import { faultsFromSettings, type ManagementFaults } from './management-api';
import type { ConnectionsTransportKind } from './runtime/connections-transport';
import { startChosenConsumers } from './runtime/consumers';
import { runCredentials } from './runtime/credentials';
import { applyToProcess, handlerEnv } from './runtime/handler-env';
import { prepareHandlerModules } from './runtime/handler-modules';
import { separateSecrets } from './runtime/secrets';
import { type RunningParts, stopRunningParts } from './runtime/shutdown';
import { type StandIns, startStandIns } from './runtime/stand-ins';
import { type LocalStats, localStats } from './runtime/stats';
import { removeWebBundles, writeWebBundles } from './runtime/web-bundles';
import { type ScheduleClock, startScheduler } from './scheduler';
import { LOCAL_REGION } from './sqs-local';
import { type SwitchableProxy, startSwitchableProxy } from './switchable-proxy';
import { ensureTable } from './table';

export { type ConnectionsTransportKind, connectionsTransportKinds } from './runtime/connections-transport';
export type { LocalStats } from './runtime/stats';

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
  /**
   * The clock of the schedules of the wiring table (the daily digest): where it starts and how fast
   * it runs, so a test sees 08:00 UTC come. `POST /_local/schedules/<id>` runs one at once either way.
   * @default the real clock
   */
  readonly scheduleClock?: ScheduleClock;
  /** Setup that must be done before `GET /health` says ready (the demo project of `npm start`). */
  readonly beforeReady?: () => Promise<void>;
  /** The origins the gateway's CORS allows, as a deployment's `corsAllowOrigins` (`lib/cors.ts`). @default every origin */
  readonly corsAllowOrigins?: readonly string[];
}

export interface LocalRuntime {
  readonly baseUrl: string;
  readonly gateway: Gateway;
  readonly dynamoEndpoint: string;
  readonly sqsEndpoint: string;
  readonly tableName: string;
  /** Queue URL by queue id (shared queues and event subscribers) and `<id>DeadLetter`. */
  readonly queueUrls: Readonly<Record<string, string>>;
  readonly eventTopicArn: string;
  /** The SES emulator's web mailbox; `GET <sesEndpoint>/store` lists its e-mails as JSON. */
  readonly sesMailboxUrl: string;
  readonly sesEndpoint: string;
  /** The S3 stand-in (`undefined` with attachments off) and its attachments bucket. */
  readonly s3Endpoint: string | undefined;
  readonly attachmentsBucket: string | undefined;
  /** The settings handed to the handlers, for processes (tests, CLI) that talk to the same stand-ins. */
  readonly env: Readonly<Record<string, string>>;
  /** The event fan-out as the publisher reaches it: stop it to simulate an SNS outage, start it to end one. */
  readonly fanOut: Pick<SwitchableProxy, 'stop' | 'start' | 'running'>;
  /** Counters a deployed stack would see in CloudWatch: metrics emitted and Step Functions work. */
  stats(): LocalStats;
  /** Starts the consumers that `consumers` held back. */
  startConsumers(): void;
  /** Runs a schedule of the wiring table now (as `POST /_local/schedules/<id>` does) and returns its outcome. */
  fireSchedule(scheduleId: string): Promise<unknown>;
  /** Runs of each schedule its clock started (not `fireSchedule`). */
  scheduledRuns(): Readonly<Record<string, number>>;
  /** Resolves once the stream consumers have taken every record written before the call. */
  drainStream(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the whole service on one machine: DynamoDB Local with its stream poller, the SQS/SNS
 * stand-in (behind a switch for the publisher), the secrets stand-in, the SES emulator, the Step
 * Functions interpreter, the queue consumers, the scheduler and the gateway, with the handler modules running in this
 * process against them through the real AWS SDK clients. Each handler's resources arrive as the
 * variables of its bindings (`functions/wiring/bindings.ts`), with the stand-ins' values. Handlers
 * read their settings from `process.env` when first imported, so this sets them before any handler
 * loads: one runtime per process.
 */
export async function startLocalRuntime(options: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  const { settings: given, secretValues } = await separateSecrets(options.env, options.dataDir);
  const credentials = runCredentials();
  const handlers = new HandlerHost(join(repoRoot, 'functions'));
  // Attachments are on unless the run's settings say `ATTACHMENTS_ENABLED=false` (the deployed `attachmentsEnabled=false`).
  const attachments = (given.ATTACHMENTS_ENABLED ?? process.env.ATTACHMENTS_ENABLED) !== 'false';
  // Bundled and generated (the OpenAPI document takes seconds) while the stand-ins start.
  const webBundles = writeWebBundles(httpRoutes);
  const dropWebBundles = () => webBundles.then(removeWebBundles, () => undefined);
  const standIns = await startStandIns({
    repoRoot,
    dataDir: options.dataDir,
    handlers,
    secretValues,
    credentials,
    attachments,
    settings: { ...process.env, ...given },
  }).catch(async (error: unknown) => {
    await dropWebBundles();
    throw error;
  });
  const running: RunningParts = { standIns, consumers: { queues: [], streams: [] } };
  const metrics: Record<string, number> = {};
  const stats = () => localStats({ metrics, standIns, consumers: running.consumers, gateway: running.gateway, handlers });
  try {
    const fanOut = await startSwitchableProxy(standIns.sqs.endpoint);
    running.fanOut = fanOut;
    const settings = { ...process.env, ...given };
    const gateway = await startGateway({
      port: options.port ?? 8787,
      handlers,
      managementAccessKeyId: credentials.accessKeyId,
      managementFaults: options.connectionsFaults ?? faultsFromSettings(settings),
      localStats: stats,
      ...(options.controls ? { fanOutSwitch: fanOut } : {}),
      demoSession: startDemoSession,
      ...(options.corsAllowOrigins ? { corsAllowOrigins: options.corsAllowOrigins } : {}),
      scheduleTrigger: (scheduleId) => {
        if (!running.scheduler) return Promise.reject(new Error('The scheduler starts once the runtime is ready'));
        return running.scheduler.fire(scheduleId);
      },
    });
    running.gateway = gateway;
    const bindings = bindingValues(standIns, gateway, settings, secretValues);
    running.webBundlesDir = await webBundles;
    const env = handlerEnv({
      credentials,
      standIns,
      fanOutEndpoint: fanOut.endpoint,
      bindings,
      settings: { WEB_BUNDLES_DIR: running.webBundlesDir, ...given },
    });
    applyToProcess(env);
    const { connectionsTransport } = options;
    const figures = startFiguresFeed({
      subscribers: logSubscribers,
      handlers,
      flushMs: Number(settings.STATS_LOCAL_FLUSH_MS ?? 1000),
      onError: (subscriberId, error) => console.error(`Log subscriber ${subscriberId} failed:`, error),
    });
    running.figures = figures;
    await prepareHandlerModules({ credentials, sqs: standIns.sqs, gateway, connectionsTransport, settings, metrics, figures });
    await createTable(standIns.dynamo.endpoint);
    const sources = {
      sqs: standIns.sqs,
      dynamoEndpoint: standIns.dynamo.endpoint,
      tableName: LOCAL_TABLE_NAME,
      accessKeyId: credentials.accessKeyId,
      handlers,
      dataDir: options.dataDir,
      settings,
    };
    const startConsumers = await startChosenConsumers(options.consumers ?? true, sources, running.consumers);
    running.scheduler = startScheduler({
      schedules,
      handlers,
      clock: options.scheduleClock,
      onError: (scheduleId, error) => console.error(`Schedule ${scheduleId} failed:`, error),
    });
    await options.beforeReady?.();
    gateway.markReady();
    return runtimeHandle({ standIns, gateway, fanOut, env, stats, startConsumers, running });
  } catch (error) {
    await stopRunningParts(running);
    if (!running.webBundlesDir) await dropWebBundles();
    throw error;
  }
}

/** What each binding kind's local value is made from (`functions/wiring/bindings.ts`). */
function bindingValues(
  standIns: StandIns,
  gateway: Gateway,
  settings: LocalStandIns['settings'],
  secretValues: Partial<Record<SecretId, string>>,
): LocalStandIns {
  // CloudFront's origin secret is bound only where CloudFront stands in front (AreaStack drops the
  // binding with `edge: false`): one machine has none, unless EDGE_ORIGIN_SECRET is given to try the check.
  const { 'origin-verify': _originSecret, ...withoutOriginSecret } = standIns.secrets.arns;
  return {
    tableName: LOCAL_TABLE_NAME,
    queueUrls: standIns.sqs.queueUrls,
    eventTopicArn: standIns.sqs.eventTopicArn,
    stateMachineArns: standIns.stepFunctions.arns,
    secretArns: secretValues['origin-verify'] ? standIns.secrets.arns : withoutOriginSecret,
    connectionsEndpoint: gateway.baseUrl,
    settings,
    apiBaseUrl: gateway.baseUrl,
    buckets: standIns.s3?.buckets ?? {},
  };
}

async function createTable(dynamoEndpoint: string): Promise<void> {
  const admin = new DynamoDBClient({ endpoint: dynamoEndpoint, region: LOCAL_REGION });
  await ensureTable(admin, LOCAL_TABLE_NAME);
  admin.destroy();
}

function runtimeHandle(parts: {
  readonly standIns: StandIns;
  readonly gateway: Gateway;
  readonly fanOut: SwitchableProxy;
  readonly env: Readonly<Record<string, string>>;
  readonly stats: () => LocalStats;
  readonly startConsumers: () => void;
  readonly running: RunningParts;
}): LocalRuntime {
  const { standIns, gateway, running } = parts;
  return {
    baseUrl: gateway.baseUrl,
    gateway,
    dynamoEndpoint: standIns.dynamo.endpoint,
    sqsEndpoint: standIns.sqs.endpoint,
    tableName: LOCAL_TABLE_NAME,
    queueUrls: standIns.sqs.queueUrls,
    eventTopicArn: standIns.sqs.eventTopicArn,
    sesMailboxUrl: standIns.ses.mailboxUrl,
    sesEndpoint: standIns.ses.endpoint,
    s3Endpoint: standIns.s3?.endpoint,
    attachmentsBucket: standIns.s3?.buckets.attachments,
    env: parts.env,
    fanOut: parts.fanOut,
    stats: parts.stats,
    startConsumers: parts.startConsumers,
    fireSchedule: (scheduleId) => (running.scheduler as NonNullable<RunningParts['scheduler']>).fire(scheduleId),
    scheduledRuns: () => running.scheduler?.firedOnSchedule() ?? {},
    drainStream: async (timeoutMs) => {
      await Promise.all(running.consumers.streams.map((poller) => poller.drain(timeoutMs)));
    },
    stop: () => stopRunningParts(running),
  };
}
