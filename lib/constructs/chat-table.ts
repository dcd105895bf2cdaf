import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, Billing, ProjectionType, StreamViewType, TableEncryptionV2, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Construct } from 'constructs';
import { tableSchema } from '#wiring/table';

/**
 * The service's single DynamoDB table with its secure defaults fixed in one place: keys and indexes
 * from `tableSchema` (`functions/wiring/table.ts`, shared with the local runtime), on-demand billing,
 * point-in-time recovery, TTL, AWS-managed encryption, retained on stack deletion and replacement
 * (but deleted when the deploy that created it rolls back, so a failed first deploy leaves no table
 * behind), and a change stream of new images that carries the domain events to their publisher.
 *
 * Deletion protection, when on, also keeps a rolled-back first deploy from deleting the table
 * (the rollback stops at it), so it is a setting: on for 'prod' by default.
 */
export class ChatTable extends Construct {
  public readonly table: TableV2;

  constructor(scope: Construct, id: string, props: { readonly deletionProtection: boolean }) {
    super(scope, id);

    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: tableSchema.partitionKey, type: AttributeType.STRING },
      sortKey: { name: tableSchema.sortKey, type: AttributeType.STRING },
      globalSecondaryIndexes: tableSchema.globalSecondaryIndexes.map((index) => ({
        indexName: index.indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType.ALL,
      })),
      timeToLiveAttribute: tableSchema.timeToLiveAttribute,
      dynamoStream: StreamViewType[tableSchema.streamViewType],
      billing: Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: TableEncryptionV2.awsManagedKey(),
      deletionProtection: props.deletionProtection,
      removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
    });
  }
}
