import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { resourceEnv } from '../table';
import { startDynamoDbLocal } from './dynamodb-local';
import { type Gateway, type ManagementStats, startGateway } from './gateway';
import { HandlerHost } from './handlers';
import { type QueueConsumerStats, type QueueConsumers, startQueueConsumers } from './queue-consumers';
import { LOCAL_REGION, startSqsLocal } from './sqs-local';
import { type StepFunctionsStats, startLocalStepFunctions } from './step-functions';
import { ensureTable } from './table';

export const LOCAL_TABLE_NAME = 'chat';
// The local runtime runs on Node 20 on purpose (Lambda runs 22); the SDK's upgrade notice is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface LocalRuntimeOptions {
  /** Gateway port; 0 picks a free one. @default 8787 */
  readonly port?: number;
  /** Folder for DynamoDB Local's files; `undefined` runs in memory. */
  readonly dataDir?: string;
  /** Extra settings for the handlers (`RATE_LIMIT_MESSAGES_PER_MINUTE`, `CHAT_OPERATOR_KEY`, ...). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Run the queue consumers: all (`true`), none, or those whose ids are listed (suites that read
   * the events queue themselves still need the realtime worker for WebSocket welcome frames).
   * @default true
   */
  readonly consumers?: boolean | readonly string[];
}

export interface LocalRuntime {
  readonly baseUrl: string;
  readonly gateway: Gateway;
  readonly dynamoEndpoint: string;
  readonly sqsEndpoint: string;
  readonly tableName: string;
  readonly queueUrls: Readonly<Record<string, string>>;
  /** The settings handed to the handlers, for processes (tests, CLI) that talk to the same stand-ins. */
  readonly env: Readonly<Record<string, string>>;
  /** Counters a deployed stack would see in CloudWatch: metrics emitted and Step Functions work. */
  stats(): LocalStats;
  /** Starts the queue consumers that `consumers` held back (benchmarks measure with and without). */
  startConsumers(): void;
  stop(): Promise<void>;
}

export interface LocalStats {
  readonly metrics: Readonly<Record<string, number>>;
  readonly stepFunctions: StepFunctionsStats;
  /** Zeros until the consumers start. */
  readonly queueConsumers: QueueConsumerStats;
  /** `@connections` calls: what API Gateway would bill as WebSocket messages sent. */
  readonly connections: ManagementStats;
}

function mergeConsumerStats(parts: readonly (QueueConsumerStats | undefined)[]): QueueConsumerStats {
  const total = { receiveRequests: 0, nonEmptyReceives: 0, deleteRequests: 0, invocations: 0, messages: 0 };
  for (const part of parts) {
    if (!part) continue;
    for (const key of Object.keys(total) as (keyof QueueConsumerStats)[]) total[key] += part[key];
  }
  return total;
}

/**
 * Starts the whole service on one machine: DynamoDB Local, the SQS stand-in, the Step Functions
 * interpreter, the queue consumers and the gateway, with
 * the handler modules running in this process against them through the real AWS SDK clients.
 * Handlers read their settings from `process.env` when first imported, so this sets them before
 * any handler loads: one runtime per process.
 */
export async function startLocalRuntime(options: LocalRuntimeOptions = {}): Promise<LocalRuntime> {
  const handlers = new HandlerHost(join(repoRoot, 'functions'));
  const [dynamo, sqs, stepFunctions] = await Promise.all([
    startDynamoDbLocal({ dataDir: options.dataDir }),
    startSqsLocal(),
    startLocalStepFunctions({ repoRoot, handlers }),
  ]);
  let gateway: Gateway | undefined;
  let consumers: QueueConsumers | undefined;
  /** Consumers started first on their own (`consumers: [ids]`), before `startConsumers()` starts the rest. */
  let extraConsumers: QueueConsumers | undefined;
  const metrics: Record<string, number> = {};
  const stats = (): LocalStats => ({
    metrics: { ...metrics },
    stepFunctions: stepFunctions.stats(),
    queueConsumers: mergeConsumerStats([consumers, extraConsumers].map((started) => started?.stats())),
    connections: gateway?.managementStats() ?? { posts: 0, gone: 0, deletes: 0 },
  });
  const stopAll = async () => {
    await Promise.all([consumers?.stop(), extraConsumers?.stop()]);
    await gateway?.stop();
    await stepFunctions.stop();
    await Promise.all([dynamo.stop(), sqs.stop()]);
  };
  try {
    gateway = await startGateway({ port: options.port ?? 8787, handlers, localStats: stats });
    const eventsQueueUrl = sqs.queueUrls.Events;
    const realtimeQueueUrl = sqs.queueUrls.Realtime;
    if (!eventsQueueUrl || !realtimeQueueUrl) throw new Error('The wiring table lacks the Events or Realtime queue');
    const env: Record<string, string> = {
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
      AWS_ENDPOINT_URL_SQS: sqs.endpoint,
      AWS_ENDPOINT_URL_SFN: stepFunctions.endpoint,
      [resourceEnv.table]: LOCAL_TABLE_NAME,
      [resourceEnv.eventsQueue]: eventsQueueUrl,
      [resourceEnv.realtimeQueue]: realtimeQueueUrl,
      [resourceEnv.connectionsEndpoint]: gateway.baseUrl,
      [resourceEnv.webhookStateMachine]: stepFunctions.arns.WebhookRetry ?? '',
      // Webhook receivers on one machine live on loopback.
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN',
      ...options.env,
    };
    Object.assign(process.env, env);
    // Credentials from the user's AWS profile must not leak into local requests.
    delete process.env.AWS_SESSION_TOKEN;
    delete process.env.AWS_PROFILE;
    // Validate the settings now, so a bad one stops the start instead of the first request.
    await import('#shared/config');
    const { addMetricSink } = await import('#shared/metrics');
    addMetricSink((name, value) => {
      metrics[name] = (metrics[name] ?? 0) + value;
    });

    const admin = new DynamoDBClient({ endpoint: dynamo.endpoint, region: LOCAL_REGION });
    await ensureTable(admin, LOCAL_TABLE_NAME);
    admin.destroy();

    const chosen = options.consumers ?? true;
    const early = Array.isArray(chosen) ? chosen : [];
    if (early.length > 0)
      extraConsumers = startQueueConsumers({ sqsEndpoint: sqs.endpoint, queueUrls: sqs.queueUrls, handlers, only: early });
    const startConsumers = () => {
      consumers ??= startQueueConsumers({ sqsEndpoint: sqs.endpoint, queueUrls: sqs.queueUrls, handlers, except: early });
    };
    if (chosen === true) startConsumers();

    return {
      baseUrl: gateway.baseUrl,
      gateway,
      dynamoEndpoint: dynamo.endpoint,
      sqsEndpoint: sqs.endpoint,
      tableName: LOCAL_TABLE_NAME,
      queueUrls: sqs.queueUrls,
      env,
      stats,
      startConsumers,
      stop: stopAll,
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
