import type { DynamoDBRecord } from 'aws-lambda';
import { chunksWithin } from '#shared/chunks';
import { insertedItem } from '#shared/db/stream-record';
import { publishToEventTopic, TOPIC_BATCH_BYTES, TOPIC_BATCH_ENTRIES } from '#shared/event-topic';
import { type DomainEvent, EventCatalogueError, parseEvent } from '#shared/events';
import { asciiJson } from '#shared/json';
import { logger } from '#shared/logger';
import { countMetric } from '#shared/metrics';
import { withTraceId } from '#shared/request-context';
import { traceIdOf } from '#shared/trace-id';
import { type AttributedEvent, type FilterAttributes, withFilterAttributes } from './message-attributes';
import { messageEvents } from './message-events';

/** Batches in flight at once. */
const PUBLISH_CONCURRENCY = 8;

/** The events a stream record carries, with their filter attributes: a new message's, or the one an outbox item holds. */
export async function eventsOfRecord(record: DynamoDBRecord): Promise<AttributedEvent[]> {
  const inserted = insertedItem(record);
  if (inserted?.kind === 'message') return withFilterAttributes(await messageEvents(inserted.message), inserted.message);
  if (inserted?.kind === 'outbox') return withFilterAttributes([parseEvent(inserted.event)]);
  return [];
}

/**
 * The trace id a stream record's item was written with (a message or outbox item's `traceId`),
 * else the stream record's own id: its events are read under it and carry it on to the topic.
 */
const traceIdOfStreamRecord = (record: DynamoDBRecord) => traceIdOf(record.dynamodb?.NewImage?.traceId?.S, record.eventID);

interface Pending {
  readonly recordIndex: number;
  readonly event: DomainEvent;
  readonly attributes: FilterAttributes;
  readonly body: string;
  readonly traceId: string;
}

/** Counted for each stream record handed back unpublished; the `EventsPublishFailedAlarm` watches it. */
export const EVENTS_PUBLISH_FAILED_METRIC = 'events_publish_failed';

/**
 * Publishes the events of a batch of stream records, in as few SNS requests as the limits allow
 * (ten per PublishBatch, several batches in flight), and returns the index of the first record
 * whose events did not all reach the topic, or `undefined` when every one did. The stream then
 * hands that record and the later ones over again; subscribers recognise events they already saw
 * by id. A record whose event breaks the catalogue is logged and passed over: it would fail the same
 * way forever and hold back every record behind it.
 */
export async function publishRecords(records: readonly DynamoDBRecord[]): Promise<number | undefined> {
  let firstFailed: number | undefined;
  const fail = (index: number) => {
    firstFailed = firstFailed === undefined ? index : Math.min(firstFailed, index);
  };
  const pending: Pending[] = [];
  await Promise.all(
    records.map((record, recordIndex) =>
      withTraceId(traceIdOfStreamRecord(record), async () => {
        try {
          const traceId = traceIdOfStreamRecord(record);
          for (const { event, attributes } of await eventsOfRecord(record)) {
            pending.push({ recordIndex, event, attributes, body: asciiJson(event), traceId });
          }
        } catch (error) {
          if (error instanceof EventCatalogueError) {
            logger.error('a stream record carries an event the catalogue refuses; passed over', {
              error: error as Error,
              sequenceNumber: record.dynamodb?.SequenceNumber,
            });
            return;
          }
          logger.error('reading the events of a stream record failed', {
            error: error as Error,
            sequenceNumber: record.dynamodb?.SequenceNumber,
          });
          fail(recordIndex);
        }
      }),
    ),
  );
  pending.sort((a, b) => a.recordIndex - b.recordIndex);

  const batches = chunksWithin(pending, {
    maxBytes: TOPIC_BATCH_BYTES,
    maxEntries: TOPIC_BATCH_ENTRIES,
    bytesOf: (entry) => Buffer.byteLength(entry.body),
  });
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      const batch = batches[next++] as Pending[];
      for (const failedIndex of await publishBatch(batch)) fail(failedIndex);
    }
  };
  await Promise.all(Array.from({ length: Math.min(PUBLISH_CONCURRENCY, batches.length) }, worker));
  // The failed record and every later one go back to the stream.
  if (firstFailed !== undefined) countMetric(EVENTS_PUBLISH_FAILED_METRIC, records.length - firstFailed);
  return firstFailed;
}

/** One PublishBatch; the record indexes of the entries that did not make it. */
async function publishBatch(batch: readonly Pending[]): Promise<number[]> {
  try {
    const refused = await publishToEventTopic(batch);
    if (refused.length > 0) logger.error('the topic refused events', { refused: refused.map((position) => batch[position]?.event.id) });
    return refused.map((position) => (batch[position] as Pending).recordIndex);
  } catch (error) {
    logger.error('publishing events failed', { error: error as Error, events: batch.length });
    return batch.map((entry) => entry.recordIndex);
  }
}
