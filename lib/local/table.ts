import {
  CreateTableCommand,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceNotFoundException,
  UpdateTableCommand,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { tableSchema } from '#wiring/table';

/**
 * Creates the table from the same schema the CDK storage stack deploys (keys, GSIs, TTL, stream),
 * unless a persisted data folder already holds it; a table from before the stream existed gets it
 * turned on, so events of the messages written from now on are published.
 */
export async function ensureTable(client: DynamoDBClient, tableName: string): Promise<'created' | 'existing'> {
  try {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    await addMissingIndexes(client, tableName, Table?.GlobalSecondaryIndexes?.map((index) => index.IndexName ?? '') ?? []);
    if (!Table?.StreamSpecification?.StreamEnabled) {
      await client.send(
        new UpdateTableCommand({
          TableName: tableName,
          StreamSpecification: { StreamEnabled: true, StreamViewType: tableSchema.streamViewType },
        }),
      );
    }
    return 'existing';
  } catch (error) {
    if (!(error instanceof ResourceNotFoundException)) throw error;
  }
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      BillingMode: 'PAY_PER_REQUEST',
      StreamSpecification: { StreamEnabled: true, StreamViewType: tableSchema.streamViewType },
      AttributeDefinitions: attributeDefinitions(),
      KeySchema: [
        { AttributeName: tableSchema.partitionKey, KeyType: 'HASH' },
        { AttributeName: tableSchema.sortKey, KeyType: 'RANGE' },
      ],
      GlobalSecondaryIndexes: tableSchema.globalSecondaryIndexes.map(indexDefinition),
    }),
  );
  await client.send(
    new UpdateTimeToLiveCommand({
      TableName: tableName,
      TimeToLiveSpecification: { AttributeName: tableSchema.timeToLiveAttribute, Enabled: true },
    }),
  );
  return 'created';
}

function attributeDefinitions() {
  const keyAttributes = [
    tableSchema.partitionKey,
    tableSchema.sortKey,
    ...tableSchema.globalSecondaryIndexes.flatMap((index) => [index.partitionKey, index.sortKey]),
  ];
  return [...new Set(keyAttributes)].map((AttributeName) => ({ AttributeName, AttributeType: 'S' as const }));
}

const indexDefinition = (index: (typeof tableSchema.globalSecondaryIndexes)[number]) => ({
  IndexName: index.indexName,
  KeySchema: [
    { AttributeName: index.partitionKey, KeyType: 'HASH' as const },
    { AttributeName: index.sortKey, KeyType: 'RANGE' as const },
  ],
  Projection: { ProjectionType: 'ALL' as const },
});

/** A persisted table from before an index existed gets it (one index per update, as DynamoDB allows). */
async function addMissingIndexes(client: DynamoDBClient, tableName: string, existing: readonly string[]): Promise<void> {
  for (const index of tableSchema.globalSecondaryIndexes) {
    if (existing.includes(index.indexName)) continue;
    await client.send(
      new UpdateTableCommand({
        TableName: tableName,
        AttributeDefinitions: attributeDefinitions(),
        GlobalSecondaryIndexUpdates: [{ Create: indexDefinition(index) }],
      }),
    );
  }
}
