/**
 * The single DynamoDB table's key schema, shared by the CDK storage stack and the local runtime's
 * `CreateTable`, so the two can never disagree. Entities (`functions/shared/db/`) name these
 * attributes and indexes; `test/infra` checks that every index an entity uses exists here.
 */
export const tableSchema = {
  partitionKey: 'pk',
  sortKey: 'sk',
  timeToLiveAttribute: 'ttl',
  /**
   * The change stream carries each new item image to the stream consumers (`streamConsumers` in
   * `functions/wiring/`): domain events travel with the write that causes them (docs/data-model.md, "Events").
   */
  streamViewType: 'NEW_IMAGE',
  globalSecondaryIndexes: [
    /** Inverted lookups: a user's rooms, a project's public rooms. */
    { indexName: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk' },
    /**
     * A user's messages, across rooms (GDPR export and erasure): only message items carry its keys,
     * written in the message's own put, and an erased message's tombstone drops them.
     */
    { indexName: 'gsi2', partitionKey: 'gsi2pk', sortKey: 'gsi2sk' },
  ],
} as const;

export type IndexName = (typeof tableSchema.globalSecondaryIndexes)[number]['indexName'];

/**
 * Sort key prefixes of the items whose insertion carries domain events to the table stream's
 * consumer (`functions/wiring/events.ts` filters on them): a message is its own `message.created`,
 * an outbox item holds an event written beside the change it announces.
 */
export const MESSAGE_SK_PREFIX = 'MSG#';
export const OUTBOX_SK_PREFIX = 'EVT#';
