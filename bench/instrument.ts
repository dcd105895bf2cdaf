/**
 * SDK middleware that counts what the handlers send to DynamoDB, SQS and SNS. It is attached to the
 * very client instances the handlers use (`#shared/db/client`, `#shared/queue` and the event
 * publisher's SNS client, which the gateway and the stream poller load in this process), so every
 * request of the message path passes through it. SNS requests are counted with the SQS ones, as
 * queue and topic requests, under the command name `SNS:<command>`.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SNSClient } from '@aws-sdk/client-sns';
import type { SQSClient } from '@aws-sdk/client-sqs';

export interface DynamoCall {
  readonly command: string;
  readonly writeUnits: number;
  readonly readUnits: number;
  /** Whole SDK call: serialization, signing, HTTP round trip and parsing. */
  readonly ms: number;
  /** `reported`: from `ConsumedCapacity`; `computed`: DynamoDB Local returned none, so from item sizes; `none`: timing only. */
  readonly capacity: 'reported' | 'computed' | 'none';
}

export interface SqsCall {
  readonly command: string;
  /** Messages carried by the request (batch entries, or 1). */
  readonly entries: number;
  readonly ms: number;
}

const WRITE_COMMANDS = new Set([
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'BatchWriteItemCommand',
  'TransactWriteItemsCommand',
]);
const COUNTER = 'benchCapacityCounter';
const CAPTURE = 'benchMarshalledInput';
const SQS_COUNTER = 'benchSqsCounter';
const CAPTURED_INPUT = Symbol('benchMarshalledInput');

type AttributeValue = Record<string, any>;

/** Size of one attribute value under the DynamoDB item size rules. */
function valueSize(value: AttributeValue): number {
  if ('S' in value) return Buffer.byteLength(String(value.S));
  if ('N' in value)
    return (
      Math.ceil(
        String(value.N)
          .replace(/^-|\.|e.*$/gi, '')
          .replace(/^0+/, '').length / 2,
      ) + 1
    );
  if ('B' in value) return (value.B as Uint8Array).byteLength;
  if ('BOOL' in value || 'NULL' in value) return 1;
  if ('SS' in value) return (value.SS as string[]).reduce((total, s) => total + Buffer.byteLength(s), 0);
  if ('NS' in value) return (value.NS as string[]).reduce((total, n) => total + valueSize({ N: n }), 0);
  if ('BS' in value) return (value.BS as Uint8Array[]).reduce((total, b) => total + b.byteLength, 0);
  if ('L' in value) return 3 + (value.L as AttributeValue[]).reduce((total, element) => total + 1 + valueSize(element), 0);
  if ('M' in value) return 3 + itemSize(value.M as Record<string, AttributeValue>) + Object.keys(value.M).length;
  return 0;
}

/** Item size in bytes: attribute names plus values (the basis of capacity units). */
export function itemSize(item: Record<string, AttributeValue>): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) size += Buffer.byteLength(name) + valueSize(value);
  return size;
}

const writeUnitsFor = (item: Record<string, AttributeValue>) => Math.max(1, Math.ceil(itemSize(item) / 1024));

/**
 * Write units from the (marshalled) request when DynamoDB Local reports none: 1 per started KB of
 * each item written, doubled inside a transaction. Updates and deletes use key + values as the size.
 */
function computeWriteUnits(command: string, input: Record<string, any>): number {
  switch (command) {
    case 'PutItemCommand':
      return writeUnitsFor(input.Item ?? {});
    case 'UpdateItemCommand':
      return writeUnitsFor({ ...(input.Key ?? {}), ...(input.ExpressionAttributeValues ?? {}) });
    case 'DeleteItemCommand':
      return writeUnitsFor(input.Key ?? {});
    case 'BatchWriteItemCommand':
      return Object.values(input.RequestItems ?? {})
        .flat()
        .reduce((total: number, request: any) => total + writeUnitsFor(request.PutRequest?.Item ?? request.DeleteRequest?.Key ?? {}), 0);
    case 'TransactWriteItemsCommand':
      return (input.TransactItems ?? []).reduce(
        (total: number, entry: any) =>
          total + 2 * writeUnitsFor(entry.Put?.Item ?? entry.Update?.Key ?? entry.Delete?.Key ?? entry.ConditionCheck?.Key ?? {}),
        0,
      );
    default:
      return 0;
  }
}

/** Sums `ConsumedCapacity`, which is one object for single-item calls and an array for batch and transact calls. */
function reportedUnits(consumed: unknown, isWrite: boolean): { read: number; write: number } | undefined {
  if (consumed === undefined || consumed === null) return undefined;
  const entries = (Array.isArray(consumed) ? consumed : [consumed]) as Record<string, number | undefined>[];
  let read = 0;
  let write = 0;
  for (const entry of entries) {
    if (entry.ReadCapacityUnits !== undefined || entry.WriteCapacityUnits !== undefined) {
      read += entry.ReadCapacityUnits ?? 0;
      write += entry.WriteCapacityUnits ?? 0;
    } else if (isWrite) write += entry.CapacityUnits ?? 0;
    else read += entry.CapacityUnits ?? 0;
  }
  return { read, write };
}

/** What the instrumented clients have sent since the recorder was attached (or last cleared). */
export class Recorder {
  readonly dynamo: DynamoCall[] = [];
  readonly sqs: SqsCall[] = [];

  mark(): { dynamo: number; sqs: number } {
    return { dynamo: this.dynamo.length, sqs: this.sqs.length };
  }

  since(mark: { dynamo: number; sqs: number }): { dynamo: DynamoCall[]; sqs: SqsCall[] } {
    return { dynamo: this.dynamo.slice(mark.dynamo), sqs: this.sqs.slice(mark.sqs) };
  }

  clear(): void {
    this.dynamo.length = 0;
    this.sqs.length = 0;
  }
}

/**
 * Adds the counters (with `capacity: false` only request counts and timings, leaving the requests
 * untouched). Initialize step (outermost, before the document client marshals): forces
 * `ReturnConsumedCapacity: 'INDEXES'` (the `TOTAL` figure plus the table/GSI split) and records
 * the call when it returns. Serialize step: keeps the marshalled input for the size fallback.
 */
export function instrument(
  clients: { dynamo: DynamoDBClient; sqs: SQSClient; sns?: SNSClient },
  recorder: Recorder,
  options: { capacity: boolean } = { capacity: true },
): () => void {
  clients.dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      if (options.capacity) input.ReturnConsumedCapacity = 'INDEXES';
      const started = performance.now();
      const result = await next(args);
      const ms = performance.now() - started;
      const command = context.commandName ?? 'unknown';
      if (!options.capacity) {
        recorder.dynamo.push({ command, writeUnits: 0, readUnits: 0, ms, capacity: 'none' });
        return result;
      }
      const isWrite = WRITE_COMMANDS.has(command);
      const reported = reportedUnits((result.output as unknown as Record<string, unknown>).ConsumedCapacity, isWrite);
      if (reported) {
        recorder.dynamo.push({ command, writeUnits: reported.write, readUnits: reported.read, ms, capacity: 'reported' });
      } else {
        const marshalled = ((context as Record<symbol, unknown>)[CAPTURED_INPUT] ?? input) as Record<string, any>;
        const consistent = marshalled.ConsistentRead === true;
        recorder.dynamo.push({
          command,
          writeUnits: isWrite ? computeWriteUnits(command, marshalled) : 0,
          readUnits: isWrite ? 0 : consistent ? 1 : 0.5,
          ms,
          capacity: 'computed',
        });
      }
      return result;
    },
    { step: 'initialize', priority: 'high', name: COUNTER },
  );
  clients.dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      (context as Record<symbol, unknown>)[CAPTURED_INPUT] = args.input;
      return next(args);
    },
    { step: 'serialize', priority: 'high', name: CAPTURE },
  );
  clients.sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const started = performance.now();
      const result = await next(args);
      const entries = (args.input as { Entries?: unknown[] }).Entries?.length ?? 1;
      recorder.sqs.push({ command: context.commandName ?? 'unknown', entries, ms: performance.now() - started });
      return result;
    },
    { step: 'initialize', priority: 'high', name: SQS_COUNTER },
  );
  clients.sns?.middlewareStack.add(
    (next, context) => async (args) => {
      const started = performance.now();
      const result = await next(args);
      const entries = (args.input as { PublishBatchRequestEntries?: unknown[] }).PublishBatchRequestEntries?.length ?? 1;
      recorder.sqs.push({ command: `SNS:${context.commandName ?? 'unknown'}`, entries, ms: performance.now() - started });
      return result;
    },
    { step: 'initialize', priority: 'high', name: SQS_COUNTER },
  );
  return () => {
    clients.sns?.middlewareStack.remove(SQS_COUNTER);
    clients.dynamo.middlewareStack.remove(COUNTER);
    clients.dynamo.middlewareStack.remove(CAPTURE);
    clients.sqs.middlewareStack.remove(SQS_COUNTER);
  };
}
