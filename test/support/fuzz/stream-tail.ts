import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBStreamsClient,
  GetRecordsCommand,
  GetShardIteratorCommand,
  type _Record as StreamRecord,
} from '@aws-sdk/client-dynamodb-streams';
import { errorName } from '../../../lib/local/stream/pacing';
import { describeStream, streamArnOf } from '../../../lib/local/stream/shard-discovery';

/** The most GetRecords returns; a page short of it is the shard's end, for now. */
const PAGE = 1000;

/** Where reading a shard resumes: its open iterator, and the last record read (to renew an expired iterator). */
interface ShardPosition {
  iterator: string;
  after?: string;
}

/**
 * A table's stream read from a point on, by a reader of its own beside the runtime's stream poller
 * (DynamoDB Local, like DynamoDB, lets any number read a stream): each {@link read} returns the
 * records written since the last, in order per shard, a closed shard's children read after it.
 */
export class StreamTail {
  /** GetRecords calls made, for the fuzz suite's summary. */
  reads = 0;
  private readonly shards = new Map<string, ShardPosition>();
  private readonly stop = new AbortController();

  private constructor(
    private readonly streams: DynamoDBStreamsClient,
    private readonly streamArn: string,
  ) {}

  /** A tail at the stream's present end: the records of writes from now on. */
  static async open(dynamo: DynamoDBClient, endpoint: string, tableName: string): Promise<StreamTail> {
    const streams = new DynamoDBStreamsClient({
      endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    const tail = new StreamTail(streams, await streamArnOf(dynamo, tableName));
    for (const [shardId, shard] of await describeStream(streams, tail.streamArn, tail.stop.signal)) {
      // A closed shard takes no more writes; what it holds is already in the table.
      if (shard.SequenceNumberRange?.EndingSequenceNumber) continue;
      tail.shards.set(shardId, { iterator: await tail.iterator(shardId, 'LATEST') });
    }
    return tail;
  }

  /** Every record written since the last read (or the tail's opening). */
  async read(): Promise<StreamRecord[]> {
    const records: StreamRecord[] = [];
    const pending = [...this.shards.keys()];
    while (pending.length > 0) {
      const shardId = pending.shift() as string;
      const closed = await this.readShard(shardId, records);
      if (!closed) continue;
      // A closed shard read to its end: writes go on in its children, which start where it ended.
      this.shards.delete(shardId);
      for (const [childId, shard] of await describeStream(this.streams, this.streamArn, this.stop.signal)) {
        if (shard.ParentShardId !== shardId || this.shards.has(childId)) continue;
        this.shards.set(childId, { iterator: await this.iterator(childId, 'TRIM_HORIZON') });
        pending.push(childId);
      }
    }
    return records;
  }

  destroy(): void {
    this.stop.abort();
    this.streams.destroy();
  }

  /** Reads one shard up to its present end into `records`; true when the shard is closed and read to its end. */
  private async readShard(shardId: string, records: StreamRecord[]): Promise<boolean> {
    const position = this.shards.get(shardId) as ShardPosition;
    for (;;) {
      const page = await this.getRecords(shardId, position);
      records.push(...page.records);
      position.after = page.records.at(-1)?.dynamodb?.SequenceNumber ?? position.after;
      if (!page.next) return true;
      position.iterator = page.next;
      if (page.records.length < PAGE) return false;
    }
  }

  private async getRecords(shardId: string, position: ShardPosition): Promise<{ records: StreamRecord[]; next?: string }> {
    try {
      this.reads++;
      const page = await this.streams.send(new GetRecordsCommand({ ShardIterator: position.iterator, Limit: PAGE }));
      return { records: page.Records ?? [], next: page.NextShardIterator };
    } catch (error) {
      if (errorName(error) !== 'ExpiredIteratorException') throw error;
      // Iterators last 15 minutes. With no record read yet, the shard is read again from its start:
      // records applied in order again end at the same images, so nothing is lost or made up.
      position.iterator = position.after
        ? await this.iterator(shardId, 'AFTER_SEQUENCE_NUMBER', position.after)
        : await this.iterator(shardId, 'TRIM_HORIZON');
      return this.getRecords(shardId, position);
    }
  }

  private async iterator(
    shardId: string,
    type: 'LATEST' | 'TRIM_HORIZON' | 'AFTER_SEQUENCE_NUMBER',
    sequenceNumber?: string,
  ): Promise<string> {
    const { ShardIterator } = await this.streams.send(
      new GetShardIteratorCommand({ StreamArn: this.streamArn, ShardId: shardId, ShardIteratorType: type, SequenceNumber: sequenceNumber }),
    );
    if (!ShardIterator) throw new Error(`No ${type} iterator for ${shardId} of ${this.streamArn}`);
    return ShardIterator;
  }
}
