import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { compileFilters, type FilterPattern } from './event-filter';
import { Checkpoints } from './stream/checkpoints';
import type { Consumer, PollerContext, StreamConsumerDefinition, StreamHandlers, StreamPollerStats } from './stream/context';
import { REGION } from './stream/lambda-records';
import { Lanes } from './stream/lanes';
import { BurstLog } from './stream/pacing';
import { describeLoop, describeStream, refreshShards, streamArnOf } from './stream/shard-discovery';

export type { StreamConsumerDefinition, StreamPollerStats } from './stream/context';

export interface StreamPollerOptions {
  readonly dynamoEndpoint: string;
  readonly tableName: string;
  readonly consumers: readonly StreamConsumerDefinition[];
  /** The Lambda invoke seam; `HandlerHost` from `lib/local/handlers.ts` fits. */
  readonly handlers: StreamHandlers;
  /**
   * JSON file remembering, per consumer and shard, the last sequence number handed over; a restart
   * on a data folder resumes after it. Without it (in-memory runs) every shard starts at TRIM_HORIZON.
   */
  readonly checkpointFile?: string;
  /**
   * Pause between GetRecords calls that returned nothing.
   * @default 100
   */
  readonly pollIntervalMs?: number;
}

export interface StreamPoller {
  stats(): StreamPollerStats;
  /** Ends every loop (promptly, even while backing off), waits for invocations under way and writes the checkpoints. */
  stop(): Promise<void>;
  /**
   * Resolves once every record written before the call has been handed to (and accepted by) every
   * consumer: for tests and benchmarks. Rejects after `timeoutMs`, naming the consumers still behind.
   * @default timeoutMs 10000
   */
  drain(timeoutMs?: number): Promise<void>;
}

function validate(consumers: readonly StreamConsumerDefinition[]): Consumer[] {
  const ids = new Set<string>();
  return consumers.map((definition) => {
    if (ids.has(definition.id)) throw new Error(`Stream consumer ${definition.id} is listed twice; each keeps its own positions`);
    ids.add(definition.id);
    if (!Number.isInteger(definition.batchSize) || definition.batchSize < 1 || definition.batchSize > 10_000) {
      throw new Error(`Stream consumer ${definition.id}: batchSize must be an integer from 1 to 10000, got ${definition.batchSize}`);
    }
    const window = definition.batchWindowMs;
    if (window !== undefined && !(Number.isInteger(window) && window > 0)) {
      throw new Error(`Stream consumer ${definition.id}: batchWindowMs must be a positive integer, got ${window}`);
    }
    try {
      return { definition, accepts: compileFilters(definition.filters as readonly FilterPattern[]) };
    } catch (error) {
      throw new Error(`Stream consumer ${definition.id}: ${(error as Error).message}`, { cause: error });
    }
  });
}

/**
 * The local stand-in for Lambda's DynamoDB Streams event source mappings: reads the table's stream
 * from DynamoDB Local and invokes each consumer's handler with the real `DynamoDBStreamEvent`.
 *
 * As on AWS: every consumer keeps its own position per shard; a shard's records arrive in order and
 * a child shard is read only after its parent; filtered-out records are skipped but move the position
 * on; a partial batch response (`batchItemFailures`) retries from the lowest failed record, a throw
 * retries the whole batch, with backoff and without ever giving up. With `checkpointFile` the
 * positions survive restarts.
 *
 * @throws when a filter pattern is unsupported, a consumer is malformed, or the table has no stream.
 */
export async function startStreamPoller(options: StreamPollerOptions): Promise<StreamPoller> {
  const consumers = validate(options.consumers);
  const context = await openStream(options);
  const lanes = new Lanes(context, consumers);
  const describing = describeLoop(context, () => lanes.startReady());
  lanes.startReady();
  let stopping: Promise<void> | undefined;
  return {
    stats: () => ({ ...context.counts }),
    stop: () => {
      stopping ??= stop(context, [describing, lanes.settled()]);
      return stopping;
    },
    drain: (timeoutMs = 10_000) => drain(context, lanes, timeoutMs),
  };
}

const clientConfig = (endpoint: string) => ({ endpoint, region: REGION, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });

/**
 * The stream's first describe and the checkpoint file are read before the poller starts, so a
 * broken setup fails the start, loudly, rather than in a background loop.
 */
async function openStream(options: StreamPollerOptions): Promise<PollerContext> {
  const dynamo = new DynamoDBClient(clientConfig(options.dynamoEndpoint));
  const streamArn = await streamArnOf(dynamo, options.tableName).finally(() => dynamo.destroy());
  const streams = new DynamoDBStreamsClient(clientConfig(options.dynamoEndpoint));
  const log = new BurstLog();
  const abort = new AbortController();
  try {
    const shards = await describeStream(streams, streamArn, abort.signal);
    const checkpoints = await Checkpoints.load(options.checkpointFile, streamArn, new Set(shards.keys()), log);
    const counts: StreamPollerStats = { getRecordsRequests: 0, invocations: 0, recordsDelivered: 0, recordsFilteredOut: 0, retries: 0 };
    return {
      streams,
      streamArn,
      abort,
      signal: abort.signal,
      handlers: options.handlers,
      checkpoints,
      counts,
      log,
      pollIntervalMs: options.pollIntervalMs ?? 100,
      wakers: new Set(),
      shards,
      drainGeneration: 0,
    };
  } catch (error) {
    streams.destroy();
    throw error;
  }
}

async function stop(context: PollerContext, loops: readonly Promise<void>[]): Promise<void> {
  context.abort.abort();
  await Promise.allSettled(loops);
  await context.checkpoints.save();
  context.streams.destroy();
}

async function drain(context: PollerContext, lanes: Lanes, timeoutMs: number): Promise<void> {
  const generation = ++context.drainGeneration;
  const deadline = Date.now() + timeoutMs;
  // Shards created before the call must be waited for too.
  await refreshShards(context).catch((error) => context.log.report('DescribeStream', error));
  lanes.startReady();
  for (const wake of [...context.wakers]) wake();
  for (;;) {
    const behind = lanes.lagging(generation);
    if (behind.length === 0) return;
    if (context.signal.aborted) throw new Error('The stream poller stopped before draining');
    if (Date.now() >= deadline) throw new Error(`The stream poller did not drain within ${timeoutMs} ms: ${behind.join(', ')}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
