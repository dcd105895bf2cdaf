import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  type _Record,
  type AttributeValue,
  DescribeStreamCommand,
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type Shard,
} from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord, DynamoDBStreamEvent, AttributeValue as LambdaAttributeValue, StreamRecord } from 'aws-lambda';
import { compileFilters, type FilterPattern, type RecordPredicate } from './event-filter';

/** The region the local stand-ins pretend to be in; DynamoDB Local itself says `ddblocal`. */
const REGION = 'us-east-1';
/** Shards split and roll over on AWS; a few seconds is how late a new one may be noticed. */
const DESCRIBE_INTERVAL_MS = 3000;
const BACKOFF_FIRST_MS = 100;
const BACKOFF_MAX_MS = 5000;
/** The most GetRecords returns for a DynamoDB stream. */
const GET_RECORDS_LIMIT = 1000;

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
}

export interface StreamPollerOptions {
  readonly dynamoEndpoint: string;
  readonly tableName: string;
  readonly consumers: readonly StreamConsumerDefinition[];
  /** The Lambda invoke seam; `HandlerHost` from `lib/local/handlers.ts` fits. */
  readonly handlers: { invoke(file: string, functionName: string, event: unknown): Promise<unknown> };
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

/**
 * DynamoDB Streams hands out Uint8Arrays; Lambda events carry base64, like the JSON wire format.
 * DynamoDB Local writes an empty map as `{}` (no type) in stream records, where DynamoDB writes
 * `{ "M": {} }`: restored here, so handlers see what they would see on AWS.
 */
function toLambdaValue(value: AttributeValue): LambdaAttributeValue {
  if (Object.keys(value).length === 0) return { M: {} };
  if (value.B !== undefined) return { B: Buffer.from(value.B).toString('base64') };
  if (value.BS !== undefined) return { BS: value.BS.map((bytes) => Buffer.from(bytes).toString('base64')) };
  if (value.L !== undefined) return { L: value.L.map(toLambdaValue) };
  if (value.M !== undefined) return { M: toLambdaImage(value.M) };
  return value as LambdaAttributeValue;
}

function toLambdaImage(image: Record<string, AttributeValue>): Record<string, LambdaAttributeValue> {
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, toLambdaValue(value)]));
}

/** A record in the shape Lambda's event source mapping delivers (and filters). */
function toLambdaRecord(record: _Record, streamArn: string): DynamoDBRecord {
  const source = record.dynamodb ?? {};
  const dynamodb: StreamRecord = {
    // Lambda sends epoch seconds where the SDK parses a Date.
    ...(source.ApproximateCreationDateTime && { ApproximateCreationDateTime: source.ApproximateCreationDateTime.getTime() / 1000 }),
    ...(source.Keys && { Keys: toLambdaImage(source.Keys) }),
    ...(source.NewImage && { NewImage: toLambdaImage(source.NewImage) }),
    ...(source.OldImage && { OldImage: toLambdaImage(source.OldImage) }),
    SequenceNumber: source.SequenceNumber,
    SizeBytes: source.SizeBytes,
    StreamViewType: source.StreamViewType,
  };
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion,
    eventSource: 'aws:dynamodb',
    awsRegion: REGION,
    dynamodb,
    eventSourceARN: streamArn,
    // Deletions by TTL say who did them.
    ...(record.userIdentity && { userIdentity: { type: record.userIdentity.Type, principalId: record.userIdentity.PrincipalId } }),
  };
}

const sequenceOf = (record: _Record): string => record.dynamodb?.SequenceNumber ?? '';

/**
 * How many records at the head of the batch the handler accepted, reading its partial batch
 * response as Lambda does: nothing (or no failures) accepts all; failures accept the records before
 * the lowest failed sequence number; a failure that names no record of the batch rejects them all.
 */
function acceptedCount(response: unknown, batch: readonly _Record[]): number {
  if (typeof response !== 'object' || response === null || Array.isArray(response)) return batch.length;
  const failures = (response as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === undefined || failures === null) return batch.length;
  if (!Array.isArray(failures)) return 0;
  let lowest = batch.length;
  for (const failure of failures) {
    const identifier = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    const index = typeof identifier === 'string' && identifier !== '' ? batch.findIndex((record) => sequenceOf(record) === identifier) : -1;
    if (index < 0) return 0;
    lowest = Math.min(lowest, index);
  }
  return lowest;
}

const errorName = (error: unknown): string | undefined => (error as { name?: string } | null)?.name;

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal, wakers?: Set<() => void>): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      wakers?.delete(done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
    wakers?.add(done);
  });
}

/** Retries back off from 100 ms, doubling to 5 s, and never give up: AWS retries until the record expires. */
class Backoff {
  private attempt = 0;
  next(): number {
    return Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** this.attempt++);
  }
  reset(): void {
    this.attempt = 0;
  }
}

/** Logs the first error of a burst per operation, and the recovery, instead of one line per retry. */
class BurstLog {
  private readonly failing = new Set<string>();
  report(operation: string, error: unknown): void {
    if (this.failing.has(operation)) return;
    this.failing.add(operation);
    console.error(`stream poller: ${operation} failed, retrying until it works`, error);
  }
  clear(operation: string): void {
    if (this.failing.delete(operation)) console.info(`stream poller: ${operation} works again`);
  }
}

type Positions = Record<string, Record<string, string>>;

/** Per consumer and shard, the last sequence number done with; kept in a JSON file when there is one. */
class Checkpoints {
  private writing: Promise<void> | undefined;
  private dirty = false;

  private readonly positions: Positions = {};

  private constructor(
    private readonly file: string | undefined,
    private readonly streamArn: string,
    private readonly log: BurstLog,
  ) {}

  /** Reads the file, keeping positions of this stream's shards that still exist. */
  static async load(file: string | undefined, streamArn: string, shardIds: ReadonlySet<string>, log: BurstLog): Promise<Checkpoints> {
    const checkpoints = new Checkpoints(file, streamArn, log);
    const text = file
      ? await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? undefined : Promise.reject(error)))
      : undefined;
    if (file && text !== undefined) {
      let saved: { streamArn?: unknown; positions?: unknown };
      try {
        saved = JSON.parse(text);
      } catch (error) {
        throw new Error(`${file} is not a stream checkpoint file: ${(error as Error).message}`);
      }
      if (typeof saved !== 'object' || saved === null || typeof saved.positions !== 'object' || saved.positions === null) {
        throw new Error(`${file} is not a stream checkpoint file: no positions`);
      }
      // A recreated table has a new stream whose shards share nothing with the old one.
      if (saved.streamArn === streamArn) {
        for (const [consumerId, shards] of Object.entries(saved.positions as Record<string, unknown>)) {
          for (const [shardId, sequenceNumber] of Object.entries((shards ?? {}) as Record<string, unknown>)) {
            if (shardIds.has(shardId) && typeof sequenceNumber === 'string') checkpoints.set(consumerId, shardId, sequenceNumber);
          }
        }
      }
    }
    return checkpoints;
  }

  get(consumerId: string, shardId: string): string | undefined {
    return this.positions[consumerId]?.[shardId];
  }

  set(consumerId: string, shardId: string, sequenceNumber: string): void {
    const shards = this.positions[consumerId] ?? {};
    shards[shardId] = sequenceNumber;
    this.positions[consumerId] = shards;
  }

  /** Drops the positions of a shard the stream no longer lists (trimmed after 24 h on AWS). */
  forget(shardId: string): void {
    for (const shards of Object.values(this.positions)) delete shards[shardId];
  }

  /**
   * Writes the positions (temp file + rename, so a crash never leaves half a file). Saves that
   * arrive while a write runs share the next write.
   */
  async save(): Promise<void> {
    if (!this.file) return;
    this.dirty = true;
    while (this.writing) await this.writing;
    if (!this.dirty) return;
    this.dirty = false;
    this.writing = this.write(this.file).finally(() => {
      this.writing = undefined;
    });
    await this.writing;
  }

  private async write(file: string): Promise<void> {
    const temporary = `${file}.${process.pid}.tmp`;
    try {
      await mkdir(dirname(file), { recursive: true });
      await writeFile(temporary, `${JSON.stringify({ streamArn: this.streamArn, positions: this.positions }, null, 2)}\n`);
      await rename(temporary, file);
      this.log.clear('writing checkpoints');
    } catch (error) {
      // The positions stay in memory; the next accepted batch tries again.
      this.log.report('writing checkpoints', error);
    }
  }
}

/** Every shard the stream lists, by id (DescribeStream pages through them). */
async function describeStream(streams: DynamoDBStreamsClient, streamArn: string, signal: AbortSignal): Promise<Map<string, Shard>> {
  const found = new Map<string, Shard>();
  let exclusiveStartShardId: string | undefined;
  do {
    const { StreamDescription } = await streams.send(
      new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: exclusiveStartShardId }),
      {
        abortSignal: signal,
      },
    );
    for (const shard of StreamDescription?.Shards ?? []) if (shard.ShardId) found.set(shard.ShardId, shard);
    exclusiveStartShardId = StreamDescription?.LastEvaluatedShardId;
  } while (exclusiveStartShardId);
  return found;
}

interface Consumer {
  readonly definition: StreamConsumerDefinition;
  readonly accepts: RecordPredicate;
}

/** One consumer's reading of one shard: Lambda's event source mapping keeps one of these per shard. */
interface Lane {
  readonly consumer: Consumer;
  readonly shardId: string;
  /** The shard is closed and read to its end (or gone). */
  finished: boolean;
  /** The latest drain generation for which a GetRecords sent after `drain()` came back empty. */
  caughtUp: number;
}

function validate(consumers: readonly StreamConsumerDefinition[]): Consumer[] {
  const ids = new Set<string>();
  return consumers.map((definition) => {
    if (ids.has(definition.id)) throw new Error(`Stream consumer ${definition.id} is listed twice; each keeps its own positions`);
    ids.add(definition.id);
    if (!Number.isInteger(definition.batchSize) || definition.batchSize < 1 || definition.batchSize > 10_000) {
      throw new Error(`Stream consumer ${definition.id}: batchSize must be an integer from 1 to 10000, got ${definition.batchSize}`);
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
  const pollIntervalMs = options.pollIntervalMs ?? 100;
  const clientConfig = {
    endpoint: options.dynamoEndpoint,
    region: REGION,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  };

  const dynamo = new DynamoDBClient(clientConfig);
  const table = await dynamo.send(new DescribeTableCommand({ TableName: options.tableName })).finally(() => dynamo.destroy());
  const latestStreamArn = table.Table?.LatestStreamArn;
  if (!latestStreamArn || !table.Table?.StreamSpecification?.StreamEnabled) {
    throw new Error(`Table ${options.tableName} has no stream enabled: create it with ensureTable (lib/local/table.ts)`);
  }
  const streamArn: string = latestStreamArn;

  const streams = new DynamoDBStreamsClient(clientConfig);
  const log = new BurstLog();
  const abort = new AbortController();
  // The first describe and the checkpoint file are read before start resolves, so a broken setup
  // fails here, loudly, rather than in a background loop.
  let shards: Map<string, Shard>;
  let checkpoints: Checkpoints;
  try {
    shards = await describeStream(streams, streamArn, abort.signal);
    checkpoints = await Checkpoints.load(options.checkpointFile, streamArn, new Set(shards.keys()), log);
  } catch (error) {
    streams.destroy();
    throw error;
  }
  const wakers = new Set<() => void>();
  const lanes = new Map<string, Lane>();
  const loops = new Set<Promise<void>>();
  const counts: StreamPollerStats = { getRecordsRequests: 0, invocations: 0, recordsDelivered: 0, recordsFilteredOut: 0, retries: 0 };
  let drainGeneration = 0;
  let stopping: Promise<void> | undefined;

  const laneKey = (consumerId: string, shardId: string) => `${consumerId}\u0000${shardId}`;

  async function describeShards(): Promise<void> {
    const found = await describeStream(streams, streamArn, abort.signal);
    for (const shardId of shards.keys()) if (!found.has(shardId)) checkpoints.forget(shardId);
    shards = found;
  }

  /** Starts a lane for every shard whose parent (if the stream still lists it) this consumer has finished. */
  function startReadyLanes(): void {
    if (abort.signal.aborted) return;
    for (const consumer of consumers) {
      for (const [shardId, shard] of shards) {
        const key = laneKey(consumer.definition.id, shardId);
        if (lanes.has(key)) continue;
        const parent = shard.ParentShardId;
        if (parent && shards.has(parent) && !lanes.get(laneKey(consumer.definition.id, parent))?.finished) continue;
        const lane: Lane = { consumer, shardId, finished: false, caughtUp: 0 };
        lanes.set(key, lane);
        const loop = readLane(lane).finally(() => {
          loops.delete(loop);
          // A finished parent lets its children start now rather than at the next describe.
          if (lane.finished) startReadyLanes();
        });
        loops.add(loop);
      }
    }
  }

  async function shardIterator(lane: Lane): Promise<string | undefined> {
    const position = checkpoints.get(lane.consumer.definition.id, lane.shardId);
    const from = (type: 'TRIM_HORIZON' | 'AFTER_SEQUENCE_NUMBER') =>
      streams.send(
        new GetShardIteratorCommand({
          StreamArn: streamArn,
          ShardId: lane.shardId,
          ShardIteratorType: type,
          ...(type === 'AFTER_SEQUENCE_NUMBER' && { SequenceNumber: position }),
        }),
        { abortSignal: abort.signal },
      );
    if (!position) return (await from('TRIM_HORIZON')).ShardIterator;
    try {
      return (await from('AFTER_SEQUENCE_NUMBER')).ShardIterator;
    } catch (error) {
      if (errorName(error) !== 'TrimmedDataAccessException') throw error;
      console.warn(
        `stream poller: ${lane.consumer.definition.id} resumes ${lane.shardId} at TRIM_HORIZON: records after ${position} were trimmed`,
      );
      return (await from('TRIM_HORIZON')).ShardIterator;
    }
  }

  /** Invokes the handler until it accepts every record of `batch`; false when stopped first. */
  async function deliver(lane: Lane, batch: readonly _Record[]): Promise<boolean> {
    const { definition } = lane.consumer;
    const backoff = new Backoff();
    let pending = batch;
    for (let attempt = 0; ; attempt++) {
      if (abort.signal.aborted) return false;
      counts.invocations++;
      if (attempt > 0) counts.retries++;
      const event: DynamoDBStreamEvent = { Records: pending.map((record) => toLambdaRecord(record, streamArn)) };
      let accepted: number;
      let failure: unknown;
      try {
        accepted = acceptedCount(await options.handlers.invoke(definition.handler, definition.id, event), pending);
      } catch (error) {
        accepted = 0;
        failure = error;
      }
      const last = pending[accepted - 1];
      if (last) {
        counts.recordsDelivered += accepted;
        checkpoints.set(definition.id, lane.shardId, sequenceOf(last));
        await checkpoints.save();
      }
      if (accepted === pending.length) return true;
      pending = pending.slice(accepted);
      const delay = backoff.next();
      console.error(
        `stream poller: ${definition.id} ${failure ? 'threw' : 'reported failures'} on ${lane.shardId}, retrying from ${sequenceOf(pending[0]!)} in ${delay} ms`,
        ...(failure ? [failure] : []),
      );
      await pause(delay, abort.signal);
    }
  }

  /** Hands a GetRecords page over in order, in batches of records that pass the filters; false when stopped first. */
  async function handOver(lane: Lane, records: readonly _Record[]): Promise<boolean> {
    const { definition, accepts } = lane.consumer;
    let start = 0;
    while (start < records.length) {
      const batch: _Record[] = [];
      let end = start;
      for (; end < records.length && batch.length < definition.batchSize; end++) {
        const record = records[end]!;
        if (accepts(toLambdaRecord(record, streamArn))) batch.push(record);
      }
      if (batch.length > 0 && !(await deliver(lane, batch))) return false;
      counts.recordsFilteredOut += end - start - batch.length;
      // Filtered-out records after the batch's last one are done with too.
      const last = records[end - 1]!;
      if (checkpoints.get(definition.id, lane.shardId) !== sequenceOf(last)) {
        checkpoints.set(definition.id, lane.shardId, sequenceOf(last));
        await checkpoints.save();
      }
      start = end;
    }
    return true;
  }

  async function readLane(lane: Lane): Promise<void> {
    const backoff = new Backoff();
    let iterator: string | undefined;
    while (!abort.signal.aborted) {
      try {
        iterator ??= await shardIterator(lane);
        log.clear('GetShardIterator');
        if (!iterator) throw new Error(`no iterator for ${lane.shardId}`);
        const generation = drainGeneration;
        counts.getRecordsRequests++;
        const page = await streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: GET_RECORDS_LIMIT }), {
          abortSignal: abort.signal,
        });
        log.clear('GetRecords');
        const records = page.Records ?? [];
        if (!(await handOver(lane, records))) return;
        backoff.reset();
        iterator = page.NextShardIterator;
        if (!iterator) {
          // A closed shard read to its end: its children may start.
          lane.finished = true;
          return;
        }
        if (records.length === 0) lane.caughtUp = generation;
        // Like Lambda, which polls a shard a few times a second: a page that was not full means the
        // reader is at the shard's end, so wait before asking again rather than spin on a busy table.
        if (records.length < GET_RECORDS_LIMIT) await pause(pollIntervalMs, abort.signal, wakers);
      } catch (error) {
        if (abort.signal.aborted) return;
        const name = errorName(error);
        if (name === 'ExpiredIteratorException' || name === 'TrimmedDataAccessException') {
          // Iterators live 15 minutes and records 24 hours: start again from the position.
          iterator = undefined;
          continue;
        }
        if (name === 'ResourceNotFoundException') {
          console.warn(`stream poller: ${lane.shardId} is gone; ${lane.consumer.definition.id} stops reading it`);
          lane.finished = true;
          return;
        }
        log.report(iterator ? 'GetRecords' : 'GetShardIterator', error);
        await pause(backoff.next(), abort.signal);
      }
    }
  }

  async function describeLoop(): Promise<void> {
    while (!abort.signal.aborted) {
      await pause(DESCRIBE_INTERVAL_MS, abort.signal);
      if (abort.signal.aborted) return;
      try {
        await describeShards();
        log.clear('DescribeStream');
        startReadyLanes();
      } catch (error) {
        if (!abort.signal.aborted) log.report('DescribeStream', error);
      }
    }
  }

  const describing = describeLoop();
  startReadyLanes();

  function lagging(generation: number): string[] {
    const behind: string[] = [];
    for (const consumer of consumers) {
      for (const shardId of shards.keys()) {
        const lane = lanes.get(laneKey(consumer.definition.id, shardId));
        if (!lane?.finished && (lane?.caughtUp ?? 0) < generation) behind.push(`${consumer.definition.id} on ${shardId}`);
      }
    }
    return behind;
  }

  return {
    stats: () => ({ ...counts }),
    stop: () => {
      stopping ??= (async () => {
        abort.abort();
        await Promise.allSettled([describing, ...loops]);
        await checkpoints.save();
        streams.destroy();
      })();
      return stopping;
    },
    drain: async (timeoutMs = 10_000) => {
      const generation = ++drainGeneration;
      const deadline = Date.now() + timeoutMs;
      // Shards created before the call must be waited for too.
      await describeShards().catch((error) => log.report('DescribeStream', error));
      startReadyLanes();
      for (const wake of [...wakers]) wake();
      for (;;) {
        const behind = lagging(generation);
        if (behind.length === 0) return;
        if (abort.signal.aborted) throw new Error('The stream poller stopped before draining');
        if (Date.now() >= deadline) throw new Error(`The stream poller did not drain within ${timeoutMs} ms: ${behind.join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
  };
}
