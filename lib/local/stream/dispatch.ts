import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import type { Lane, PollerContext } from './context';
import { acceptedCount, sequenceOf, toLambdaRecord } from './lambda-records';
import { Backoff, pause } from './pacing';

/**
 * Invokes the handler until it accepts every record of `batch`; false when stopped first. Each
 * attempt moves the position past the records it accepted, so a retry repeats only the rest (a
 * throw accepts none), with backoff and without ever giving up, as Lambda does.
 */
export async function deliver(context: PollerContext, lane: Lane, batch: readonly _Record[]): Promise<boolean> {
  const { definition } = lane.consumer;
  const { counts, signal } = context;
  const backoff = new Backoff();
  let pending = batch;
  for (let attempt = 0; ; attempt++) {
    if (signal.aborted) return false;
    counts.invocations++;
    if (attempt > 0) counts.retries++;
    const { accepted, failure } = await invoke(context, lane, pending);
    const last = pending[accepted - 1];
    if (last) {
      counts.recordsDelivered += accepted;
      context.checkpoints.set(definition.id, lane.shardId, sequenceOf(last));
      await context.checkpoints.save();
    }
    if (accepted === pending.length) return true;
    pending = pending.slice(accepted);
    const delay = backoff.next();
    console.error(
      `stream poller: ${definition.id} ${failure ? 'threw' : 'reported failures'} on ${lane.shardId}, retrying from ${sequenceOf(pending[0]!)} in ${delay} ms`,
      ...(failure ? [failure] : []),
    );
    await pause(delay, signal);
  }
}

/** One invocation with the real `DynamoDBStreamEvent`: how many records at the head it accepted, and what it threw. */
async function invoke(context: PollerContext, lane: Lane, records: readonly _Record[]): Promise<{ accepted: number; failure?: unknown }> {
  const { definition } = lane.consumer;
  const event: DynamoDBStreamEvent = { Records: records.map((record) => toLambdaRecord(record, context.streamArn)) };
  try {
    return { accepted: acceptedCount(await context.handlers.invoke(definition.handler, definition.id, event), records) };
  } catch (error) {
    return { accepted: 0, failure: error };
  }
}
