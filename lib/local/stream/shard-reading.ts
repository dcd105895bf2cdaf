import { GetRecordsCommand, GetShardIteratorCommand } from '@aws-sdk/client-dynamodb-streams';
import { handOver } from './batching';
import type { Lane, PollerContext } from './context';
import { Backoff, errorName, pause } from './pacing';

/** The most GetRecords returns for a DynamoDB stream. */
const GET_RECORDS_LIMIT = 1000;

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
  const cadence = lane.consumer.definition.pollCadenceMs;
  while (!signal.aborted) {
    const readStarted = Date.now();
    try {
      iterator ??= await shardIterator(context, lane);
      log.clear('GetShardIterator');
      if (!iterator) throw new Error(`no iterator for ${lane.shardId}`);
      const read = await readPage(context, lane, iterator);
      if (read === 'stopped') return;
      backoff.reset();
      iterator = read.next;
      if (!iterator) {
        // A closed shard read to its end: its children may start.
        lane.finished = true;
        return;
      }
      // A consumer with a cadence reads once per window (measured from this read's start), full page or not.
      if (cadence !== undefined) await pause(Math.max(0, cadence - (Date.now() - readStarted)), signal, context.wakers);
      // Like Lambda, which polls a shard a few times a second: a page that was not full means the
      // reader is at the shard's end, so wait before asking again rather than spin on a busy table.
      else if (read.count < GET_RECORDS_LIMIT) await pause(context.pollIntervalMs, signal, context.wakers);
    } catch (error) {
      if (signal.aborted) return;
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
      await pause(backoff.next(), signal);
    }
  }
}

/** One GetRecords page, handed over: how many records it held and the iterator after it, or `stopped`. */
async function readPage(context: PollerContext, lane: Lane, iterator: string): Promise<{ count: number; next?: string } | 'stopped'> {
  // Taken before the request: an empty page answers only the drains that began before it was asked for.
  const generation = context.drainGeneration;
  context.counts.getRecordsRequests++;
  const page = await context.streams.send(new GetRecordsCommand({ ShardIterator: iterator, Limit: GET_RECORDS_LIMIT }), {
    abortSignal: context.signal,
  });
  context.log.clear('GetRecords');
  const records = page.Records ?? [];
  if (!(await handOver(context, lane, records))) return 'stopped';
  if (page.NextShardIterator && records.length === 0) lane.caughtUp = generation;
  return { count: records.length, next: page.NextShardIterator };
}
