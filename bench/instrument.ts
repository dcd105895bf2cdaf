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

interface DynamoCall {
  /** Without the `Command` suffix: `PutItem`. */
  readonly command: string;
  readonly writeUnits: number;
  readonly readUnits: number;
  /** Whole SDK call: serialization, signing, HTTP round trip and parsing. */
  readonly ms: number;
  /** `reported`: from `ConsumedCapacity`; `computed`: DynamoDB Local returned none, so from item sizes; `none`: timing only. */
  readonly capacity: 'reported' | 'computed' | 'none';
  /** The `pk` of each item the request names by key or writes whole (none for a Query or Scan), to tell one entity's requests from the rest. */
  readonly partitionKeys: readonly string[];
  /** The request was refused (a failed condition, a cancelled transaction): still a request, billed, but with no units recorded. */
  readonly failed?: true;
}

interface SqsCall {
  /** Without the `Command` suffix; SNS requests as `SNS:PublishBatch`. */
  readonly command: string;
  /** Messages carried by the request (batch entries, or 1). */
  readonly entries: number;
  readonly ms: number;
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);
const NAMES = { counter: 'benchCapacityCounter', capture: 'benchMarshalledInput', queue: 'benchSqsCounter' };
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
  return Object.entries(item).reduce((size, [name, value]) => size + Buffer.byteLength(name) + valueSize(value), 0);
}

const writeUnitsFor = (item: Record<string, AttributeValue> = {}) => Math.max(1, Math.ceil(itemSize(item) / 1024));

/**
 * Write units from the (marshalled) request when DynamoDB Local reports none: 1 per started KB of
 * each item written, doubled inside a transaction. Updates and deletes use key + values as the size.
 */
function computeWriteUnits(command: string, input: Record<string, any>): number {
  if (command === 'PutItem') return writeUnitsFor(input.Item);
  if (command === 'UpdateItem') return writeUnitsFor({ ...input.Key, ...input.ExpressionAttributeValues });
  if (command === 'DeleteItem') return writeUnitsFor(input.Key);
  if (command === 'BatchWriteItem') {
    const requests = Object.values(input.RequestItems ?? {}).flat() as any[];
    return requests.reduce((total: number, request) => total + writeUnitsFor(request.PutRequest?.Item ?? request.DeleteRequest?.Key), 0);
  }
  if (command === 'TransactWriteItems') {
    return (input.TransactItems ?? []).reduce(
      (total: number, entry: any) =>
        total + 2 * writeUnitsFor(entry.Put?.Item ?? entry.Update?.Key ?? entry.Delete?.Key ?? entry.ConditionCheck?.Key),
      0,
    );
  }
  return 0;
}

/** Sums `ConsumedCapacity`, which is one object for single-item calls and an array for batch and transact calls. */
function reportedUnits(consumed: unknown, isWrite: boolean): { read: number; write: number } | undefined {
  if (consumed === undefined || consumed === null) return undefined;
  let read = 0;
  let write = 0;
  for (const entry of (Array.isArray(consumed) ? consumed : [consumed]) as Record<string, number | undefined>[]) {
    if (entry.ReadCapacityUnits !== undefined || entry.WriteCapacityUnits !== undefined) {
      read += entry.ReadCapacityUnits ?? 0;
      write += entry.WriteCapacityUnits ?? 0;
    } else if (isWrite) write += entry.CapacityUnits ?? 0;
    else read += entry.CapacityUnits ?? 0;
  }
  return { read, write };
}

/** The `pk` values of a request's unmarshalled input (the document client's), as {@link DynamoCall.partitionKeys}. */
function partitionKeysOf(input: Record<string, any>): string[] {
  const pkOf = (item: Record<string, unknown> | undefined) => (typeof item?.pk === 'string' ? [item.pk] : []);
  const single = [...pkOf(input.Key), ...pkOf(input.Item)];
  const transact = ((input.TransactItems ?? []) as Record<string, any>[]).flatMap((entry) =>
    Object.values(entry).flatMap((operation: Record<string, any>) => [...pkOf(operation.Key), ...pkOf(operation.Item)]),
  );
  const batch = Object.values((input.RequestItems ?? {}) as Record<string, any>).flatMap((requests) =>
    Array.isArray(requests)
      ? requests.flatMap((request: Record<string, any>) => [...pkOf(request.PutRequest?.Item), ...pkOf(request.DeleteRequest?.Key)])
      : ((requests?.Keys ?? []) as Record<string, unknown>[]).flatMap(pkOf),
  );
  return [...single, ...transact, ...batch];
}

type Mark = { dynamo: number; sqs: number };

/** What the instrumented clients have sent since the counters were attached. */
export class Recorder {
  readonly dynamo: DynamoCall[] = [];
  readonly sqs: SqsCall[] = [];

  mark(): Mark {
    return { dynamo: this.dynamo.length, sqs: this.sqs.length };
  }

  since(mark: Mark): { dynamo: DynamoCall[]; sqs: SqsCall[] } {
    return { dynamo: this.dynamo.slice(mark.dynamo), sqs: this.sqs.slice(mark.sqs) };
  }
}

/**
 * Runs `work` with the counters on `clients` and removes them afterwards (with `capacity: false`
 * only request counts and timings, leaving the requests untouched). Initialize step (outermost,
 * before the document client marshals): forces `ReturnConsumedCapacity: 'INDEXES'` (the `TOTAL`
 * figure plus the table/GSI split) and records the call when it returns. Serialize step: keeps the
 * marshalled input for the size fallback.
 */
export async function recording<T>(
  clients: { dynamo: DynamoDBClient; sqs: SQSClient; sns?: SNSClient },
  work: (recorder: Recorder) => Promise<T>,
  options: { capacity: boolean } = { capacity: true },
): Promise<T> {
  const recorder = new Recorder();
  clients.dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      const partitionKeys = partitionKeysOf(input);
      if (options.capacity) input.ReturnConsumedCapacity = 'INDEXES';
      const started = performance.now();
      const command = (context.commandName ?? 'unknown').replace(/Command$/, '');
      const isWrite = WRITES.has(command);
      let result: Awaited<ReturnType<typeof next>>;
      try {
        result = await next(args);
      } catch (error) {
        // An error carries no capacity, and the units a refused write is billed are not worth guessing here.
        recorder.dynamo.push({
          command,
          writeUnits: 0,
          readUnits: 0,
          ms: performance.now() - started,
          capacity: 'none',
          partitionKeys,
          failed: true,
        });
        throw error;
      }
      const ms = performance.now() - started;
      const reported = options.capacity
        ? reportedUnits((result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity, isWrite)
        : undefined;
      if (!options.capacity) recorder.dynamo.push({ command, writeUnits: 0, readUnits: 0, ms, capacity: 'none', partitionKeys });
      else if (reported)
        recorder.dynamo.push({ command, writeUnits: reported.write, readUnits: reported.read, ms, capacity: 'reported', partitionKeys });
      else {
        const marshalled = ((context as Record<symbol, unknown>)[CAPTURED_INPUT] ?? input) as Record<string, any>;
        const readUnits = isWrite ? 0 : marshalled.ConsistentRead === true ? 1 : 0.5;
        recorder.dynamo.push({
          command,
          writeUnits: isWrite ? computeWriteUnits(command, marshalled) : 0,
          readUnits,
          ms,
          capacity: 'computed',
          partitionKeys,
        });
      }
      return result;
    },
    { step: 'initialize', priority: 'high', name: NAMES.counter },
  );
  clients.dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      (context as Record<symbol, unknown>)[CAPTURED_INPUT] = args.input;
      return next(args);
    },
    { step: 'serialize', priority: 'high', name: NAMES.capture },
  );
  const queueCounter =
    (prefix: string, entriesOf: (input: any) => unknown[] | undefined) => (next: any, context: any) => async (args: any) => {
      const started = performance.now();
      const result = await next(args);
      recorder.sqs.push({
        command: `${prefix}${(context.commandName ?? 'unknown').replace(/Command$/, '')}`,
        entries: entriesOf(args.input)?.length ?? 1,
        ms: performance.now() - started,
      });
      return result;
    };
  clients.sqs.middlewareStack.add(
    queueCounter('', (input) => input.Entries),
    { step: 'initialize', priority: 'high', name: NAMES.queue },
  );
  clients.sns?.middlewareStack.add(
    queueCounter('SNS:', (input) => input.PublishBatchRequestEntries),
    { step: 'initialize', priority: 'high', name: NAMES.queue },
  );
  try {
    return await work(recorder);
  } finally {
    clients.sns?.middlewareStack.remove(NAMES.queue);
    clients.dynamo.middlewareStack.remove(NAMES.counter);
    clients.dynamo.middlewareStack.remove(NAMES.capture);
    clients.sqs.middlewareStack.remove(NAMES.queue);
  }
}
