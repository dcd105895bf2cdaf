import type { DynamoDBStreamsClient, Shard } from '@aws-sdk/client-dynamodb-streams';
import type { RecordPredicate } from '../event-filter';
import type { Checkpoints } from './checkpoints';
import type { BurstLog } from './pacing';

/** A consumer of the table's stream: what the wiring table's stream consumers provide. */
export interface StreamConsumerDefinition {
  /** The Lambda function's name locally; also the key of its positions in the checkpoint file. */
  readonly id: string;
  /** Module path relative to `functions/`, invoked through the handler host. */
  readonly handler: string;
  /** The most records (that passed the filters) in one invocation. */
  readonly batchSize: number;
  /** Lambda event filter patterns; a record is delivered when any matches; none delivers every record. */
  readonly filters: readonly Record<string, unknown>[];
  /**
   * Hold a lane's records for this many ms after the first one that passes the filters arrives, and
   * hand everything read meanwhile over in one invocation (the coalesced delivery window). Such a
   * lane polls every `WINDOW_POLL_MS` while idle, so a window opens soon after its first record is
   * written. Unset: records are handed over as they are read.
   */
  readonly batchWindowMs?: number;
}

/** What Lambda's event source mappings would have done on AWS, summed over consumers. */
export interface StreamPollerStats {
  getRecordsRequests: number;
  /** Handler invocations, retries included. */
  invocations: number;
  /** Records a handler accepted (each once per consumer, however many attempts it took). */
  recordsDelivered: number;
  /** Records a consumer's filters skipped (counted once per consumer). */
  recordsFilteredOut: number;
  /** Invocations that repeated records after a throw or a reported batch item failure. */
  retries: number;
}

/** The Lambda invoke seam; `HandlerHost` from `lib/local/handlers.ts` fits. */
export interface StreamHandlers {
  invoke(file: string, functionName: string, event: unknown): Promise<unknown>;
}

export interface Consumer {
  readonly definition: StreamConsumerDefinition;
  readonly accepts: RecordPredicate;
}

/** One consumer's reading of one shard: Lambda's event source mapping keeps one of these per shard. */
export interface Lane {
  readonly consumer: Consumer;
  readonly shardId: string;
  /** The shard is closed and read to its end (or gone). */
  finished: boolean;
  /** The latest drain generation for which a GetRecords sent after `drain()` came back empty. */
  caughtUp: number;
}

/** What the poller's parts share for as long as it runs. */
export interface PollerContext {
  readonly streams: DynamoDBStreamsClient;
  readonly streamArn: string;
  /** Aborted by `stop()`: every loop, pause and request under way ends. */
  readonly abort: AbortController;
  readonly signal: AbortSignal;
  readonly handlers: StreamHandlers;
  readonly checkpoints: Checkpoints;
  readonly counts: StreamPollerStats;
  readonly log: BurstLog;
  readonly pollIntervalMs: number;
  /** Lanes waiting at their shard's end; `drain()` wakes them rather than wait out the poll interval. */
  readonly wakers: Set<() => void>;
  /** Every shard the stream listed at the last describe, by id. */
  shards: Map<string, Shard>;
  /** Counts `drain()` calls, so a lane can tell which drains an empty read of its answers. */
  drainGeneration: number;
}
