import type { _Record, AttributeValue } from '@aws-sdk/client-dynamodb-streams';
import type { DynamoDBRecord, AttributeValue as LambdaAttributeValue, StreamRecord } from 'aws-lambda';

/** The region the local stand-ins pretend to be in; DynamoDB Local itself says `ddblocal`. */
export const REGION = 'us-east-1';

/**
 * DynamoDB Streams hands out Uint8Arrays; Lambda events carry base64, like the JSON wire format.
 * DynamoDB Local writes an empty map as `{}` (no type) in stream records, where DynamoDB writes
 * `{ "M": {} }`: restored here, so handlers see what they would see on AWS.
 */
function toLambdaValue(value: AttributeValue): LambdaAttributeValue {
  if (Object.keys(value).length === 0) return { M: {} };
  if (value.B !== undefined) return { B: Buffer.from(value.B).toString('base64') };
  if (value.BS !== undefined) return { BS: value.BS.map((bytes) => Buffer.from(bytes).toString('base64')) };
  if (value.L !== undefined) return { L: value.L.map(toLambdaValue) };
  if (value.M !== undefined) return { M: toLambdaImage(value.M) };
  return value as LambdaAttributeValue;
}

function toLambdaImage(image: Record<string, AttributeValue>): Record<string, LambdaAttributeValue> {
  return Object.fromEntries(Object.entries(image).map(([name, value]) => [name, toLambdaValue(value)]));
}

/** A record in the shape Lambda's event source mapping delivers (and filters). */
export function toLambdaRecord(record: _Record, streamArn: string): DynamoDBRecord {
  const source = record.dynamodb ?? {};
  const dynamodb: StreamRecord = {
    // Lambda sends epoch seconds where the SDK parses a Date.
    ...(source.ApproximateCreationDateTime && { ApproximateCreationDateTime: source.ApproximateCreationDateTime.getTime() / 1000 }),
    ...(source.Keys && { Keys: toLambdaImage(source.Keys) }),
    ...(source.NewImage && { NewImage: toLambdaImage(source.NewImage) }),
    ...(source.OldImage && { OldImage: toLambdaImage(source.OldImage) }),
    SequenceNumber: source.SequenceNumber,
    SizeBytes: source.SizeBytes,
    StreamViewType: source.StreamViewType,
  };
  return {
    eventID: record.eventID,
    eventName: record.eventName,
    eventVersion: record.eventVersion,
    eventSource: 'aws:dynamodb',
    awsRegion: REGION,
    dynamodb,
    eventSourceARN: streamArn,
    // Deletions by TTL say who did them.
    ...(record.userIdentity && { userIdentity: { type: record.userIdentity.Type, principalId: record.userIdentity.PrincipalId } }),
  };
}

export const sequenceOf = (record: _Record): string => record.dynamodb?.SequenceNumber ?? '';

/**
 * How many records at the head of the batch the handler accepted, reading its partial batch
 * response as Lambda does: nothing (or no failures) accepts all; failures accept the records before
 * the lowest failed sequence number; a failure that names no record of the batch rejects them all.
 */
export function acceptedCount(response: unknown, batch: readonly _Record[]): number {
  if (typeof response !== 'object' || response === null || Array.isArray(response)) return batch.length;
  const failures = (response as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === undefined || failures === null) return batch.length;
  if (!Array.isArray(failures)) return 0;
  let lowest = batch.length;
  for (const failure of failures) {
    const identifier = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    const index = typeof identifier === 'string' && identifier !== '' ? batch.findIndex((record) => sequenceOf(record) === identifier) : -1;
    if (index < 0) return 0;
    lowest = Math.min(lowest, index);
  }
  return lowest;
}
