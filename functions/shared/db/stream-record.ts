import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { EventCatalogueError } from '#shared/events';
import { MESSAGE_SK_PREFIX, OUTBOX_SK_PREFIX } from './keys';
import { type MessageItem, messageItem } from './message';

/** What an item the table stream reports as new carries for the events publisher. */
export type InsertedItem =
  | { readonly kind: 'message'; readonly message: MessageItem }
  | { readonly kind: 'outbox'; readonly event: unknown; readonly traceId?: string };

/**
 * The message or outbox item a stream record inserted, `undefined` for any other record. An image
 * that cannot be read, or a message item that breaks its schema, throws {@link EventCatalogueError}:
 * it would fail the same way however often it is read.
 */
export function insertedItem(record: DynamoDBRecord): InsertedItem | undefined {
  const image = record.dynamodb?.NewImage;
  if (record.eventName !== 'INSERT' || !image) return undefined;
  let item: Record<string, unknown>;
  try {
    item = unmarshall(image as Record<string, AttributeValue>);
  } catch (error) {
    throw new EventCatalogueError(`The record's image cannot be read: ${(error as Error).message}`);
  }
  const sk = String(item.sk ?? '');
  if (sk.startsWith(MESSAGE_SK_PREFIX)) {
    const message = messageItem.safeParse(item);
    if (!message.success) throw new EventCatalogueError(`Message item ${sk} does not match its schema: ${message.error.message}`);
    return { kind: 'message', message: message.data };
  }
  if (sk.startsWith(OUTBOX_SK_PREFIX)) {
    return { kind: 'outbox', event: item.event, ...(typeof item.traceId === 'string' ? { traceId: item.traceId } : {}) };
  }
  return undefined;
}
