import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DescribeStreamCommand, type DynamoDBStreamsClient, type Shard } from '@aws-sdk/client-dynamodb-streams';
import type { PollerContext } from './context';
import { pause } from './pacing';

/** Shards split and roll over on AWS; a few seconds is how late a new one may be noticed. */
const DESCRIBE_INTERVAL_MS = 3000;

/** The table's stream, refused when the table has none (the poller would have nothing to read). */
export async function streamArnOf(dynamo: DynamoDBClient, tableName: string): Promise<string> {
  const table = await dynamo.send(new DescribeTableCommand({ TableName: tableName }));
  const streamArn = table.Table?.LatestStreamArn;
  if (!streamArn || !table.Table?.StreamSpecification?.StreamEnabled) {
    throw new Error(`Table ${tableName} has no stream enabled: create it with ensureTable (lib/local/table.ts)`);
  }
  return streamArn;
}

/** Every shard the stream lists, by id (DescribeStream pages through them). */
export async function describeStream(streams: DynamoDBStreamsClient, streamArn: string, signal: AbortSignal): Promise<Map<string, Shard>> {
  const found = new Map<string, Shard>();
  let exclusiveStartShardId: string | undefined;
  do {
    const { StreamDescription } = await streams.send(
      new DescribeStreamCommand({ StreamArn: streamArn, ExclusiveStartShardId: exclusiveStartShardId }),
      { abortSignal: signal },
    );
    for (const shard of StreamDescription?.Shards ?? []) if (shard.ShardId) found.set(shard.ShardId, shard);
    exclusiveStartShardId = StreamDescription?.LastEvaluatedShardId;
  } while (exclusiveStartShardId);
  return found;
}

/** Takes in the stream's current shards; positions in shards it no longer lists are dropped. */
export async function refreshShards(context: PollerContext): Promise<void> {
  const found = await describeStream(context.streams, context.streamArn, context.signal);
  for (const shardId of context.shards.keys()) if (!found.has(shardId)) context.checkpoints.forget(shardId);
  context.shards = found;
}

/** Describes the stream every few seconds until stopped, calling `onShards` after each describe that worked. */
export async function describeLoop(context: PollerContext, onShards: () => void): Promise<void> {
  const { signal, log } = context;
  while (!signal.aborted) {
    await pause(DESCRIBE_INTERVAL_MS, signal);
    if (signal.aborted) return;
    try {
      await refreshShards(context);
      log.clear('DescribeStream');
      onShards();
    } catch (error) {
      if (!signal.aborted) log.report('DescribeStream', error);
    }
  }
}
