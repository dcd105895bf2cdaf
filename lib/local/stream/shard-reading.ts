import { type _Record, GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import { handOver } from './batching';
import type { Lane, PollerContext } from './context';
import { toLambdaRecord } from './lambda-records';
import { Backoff, errorName, pause } from './pacing';

/** The most GetRecords returns for a DynamoDB stream. */
const GET_RECORDS_LIMIT = 1000;

/**
 * How often a lane with a batch window reads: while idle, so a window opens within this long of its
 * first record; while a window is open, so the reads stay small. A few small GetRecords a second
 * per shard, for the one consumer that has a window.
 */
export const WINDOW_POLL_MS = 20;

/** The records a lane with a batch window read and holds until the window closes. */
interface HeldWindow {
  readonly records: _Record[];
  /** Epoch ms; unset while only records the filters skip are held. */
  closesAt?: number;
}

/** Where the lane resumes: after its saved position, or at the shard's start when it has none or it was trimmed. */
async function shardIterator(context: PollerContext, lane: Lane): Promise<string | undefined> {
  const position = context.checkpoints.get(lane.consumer.definition.id, lane.shardId);
  const from = (type: 'TRIM_HORIZON' | 'AFTER_SEQUENCE_NUMBER') =>
    context.streams.send(
      new GetShardIteratorCommand({
        StreamArn: context.streamArn,
        ShardId: lane.shardId,
        ShardIteratorType: type,
        ...(type === 'AFTER_SEQUENCE_NUMBER' && { SequenceNumber: position }),
      }),
      { abortSignal: context.signal },
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

/**
 * Reads one shard for one consumer until stopped, the shard is closed and read to its end, or the
 * stream no longer has it (`lane.finished` tells which). Errors back off and retry.
 */
export async function readLane(context: PollerContext, lane: Lane): Promise<void> {
  const { signal, log } = context;
  const backoff = new Backoff();
  let iterator: string | undefined;
  const windowMs = lane.consumer.definition.batchWindowMs;
  const held: HeldWindow | undefined = windowMs === undefined ? undefined : { records: [] };
  while (!signal.aborted) {
    try {
      iterator ??= await shardIterator(context, lane);
      log.clear('GetShardIterator');
      if (!iterator) throw new Error(`no iterator for ${lane.shardId}`);
      const read = await readPage(context, lane, iterator, held && windowMs !== undefined ? { held, windowMs } : undefined);
      if (read === 'stopped') return;
      backoff.reset();
      iterator = read.next;
      if (!iterator) {
        // A closed shard read to its end: its children may start (what a window held went over first).
        lane.finished = true;
        return;
      }
      if (held)
        await pause(
          held.closesAt === undefined ? WINDOW_POLL_MS : Math.min(WINDOW_POLL_MS, Math.max(0, held.closesAt - Date.now())),
          signal,
          context.wakers,
        );
      // Like Lambda, which polls a shard a few times a second: a page that was not full means the
      // reader is at the shard's end, so wait before asking again rather than spin on a busy table.
      else if (read.count < GET_RECORDS_LIMIT) await pause(context.pollIntervalMs, signal, context.wakers);
    } catch (error) {
      if (signal.aborted) return;
      const name = errorName(error);
      if (name === 'ExpiredIteratorException' || name === 'TrimmedDataAccessException') {
        // Iterators live 15 minutes and records 24 hours: start again from the position. What a
        // window held is read again from there, so it is dropped rather than handed over twice.
        iterator = undefined;
        if (held) {
          held.records.length = 0;
          held.closesAt = undefined;
        }
        continue;
      }
      if (name === 'ResourceNotFoundException') {
        console.warn(`stream poller: ${lane.shardId} is gone; ${lane.consumer.definition.id} stops reading it`);
        lane.finished = true;
        return;
      }
      log.report(iterator ? 'GetRecords' : 'GetShardIterator', error);
      await pause(backoff.next(), signal);
    }
  }
}

/**
 * One GetRecords page, handed over (or, in a batch window, held until the window closes): how many
 * records it held and the iterator after it, or `stopped`.
 */
async function readPage(
  context: PollerContext,
  lane: Lane,
  iterator: string,
  window?: { readonly held: HeldWindow; readonly windowMs: number },
): Promise<{ count: number; next?: string } | 'stopped'> {
  // Taken before the request: an empty page answers only the drains that began before it was asked for.
  const generation = context.drainGeneration;
  context.counts.getRecordsRequests++;
  const page = await context.streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: GET_RECORDS_LIMIT }), {
    abortSignal: context.signal,
  });
  context.log.clear('GetRecords');
  const records = page.Records ?? [];
  const toHandOver = window ? heldUntilClosed(context, lane, window, records, !page.NextShardIterator) : records;
  if (toHandOver.length > 0 && !(await handOver(context, lane, toHandOver))) return 'stopped';
  const holding = window !== undefined && window.held.records.length > 0;
  if (page.NextShardIterator && records.length === 0 && !holding) lane.caughtUp = generation;
  return { count: records.length, next: page.NextShardIterator };
}

/**
 * Adds a page to the lane's window and answers what is due now: everything held once the window
 * closed (or the shard ended), else nothing. The first record the filters pass opens the window;
 * records they skip alone open none, and go over at once to move the position on.
 */
function heldUntilClosed(
  context: PollerContext,
  lane: Lane,
  window: { readonly held: HeldWindow; readonly windowMs: number },
  records: readonly _Record[],
  shardEnded: boolean,
): _Record[] {
  const { held, windowMs } = window;
  held.records.push(...records);
  if (held.closesAt === undefined && records.some((record) => lane.consumer.accepts(toLambdaRecord(record, context.streamArn)))) {
    held.closesAt = Date.now() + windowMs;
  }
  const due = shardEnded || held.closesAt === undefined || Date.now() >= held.closesAt;
  if (!due) return [];
  const out = held.records.splice(0);
  held.closesAt = undefined;
  return out;
}
