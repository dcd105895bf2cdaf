import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import type { Lane, PollerContext } from './context';
import { deliver } from './dispatch';
import { sequenceOf, toLambdaRecord } from './lambda-records';

/**
 * Hands a GetRecords page over in order, in batches of up to `batchSize` records that pass the
 * consumer's filters; false when stopped first. Filtered-out records are skipped but move the
 * position on, as Lambda's event filtering does.
 */
export async function handOver(context: PollerContext, lane: Lane, records: readonly _Record[]): Promise<boolean> {
  const { definition } = lane.consumer;
  const { checkpoints } = context;
  let start = 0;
  while (start < records.length) {
    const { batch, end } = nextBatch(context, lane, records, start);
    if (batch.length > 0 && !(await deliver(context, lane, batch))) return false;
    context.counts.recordsFilteredOut += end - start - batch.length;
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

/** The records from `start` that pass the filters, up to a full batch, and where the scan stopped. */
function nextBatch(context: PollerContext, lane: Lane, records: readonly _Record[], start: number): { batch: _Record[]; end: number } {
  const { definition, accepts } = lane.consumer;
  const batch: _Record[] = [];
  let end = start;
  for (; end < records.length && batch.length < definition.batchSize; end++) {
    const record = records[end]!;
    if (accepts(toLambdaRecord(record, context.streamArn))) batch.push(record);
  }
  return { batch, end };
}
