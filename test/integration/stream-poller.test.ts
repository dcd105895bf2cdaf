import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteTableCommand, DescribeTableCommand, DynamoDBClient, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  type StreamConsumerDefinition,
  type StreamPoller,
  type StreamPollerOptions,
  startStreamPoller,
} from '../../lib/local/stream-poller';
import { ensureTable } from '../../lib/local/table';

/**
 * The local DynamoDB Streams event source against DynamoDB Local's stream, through the real SDK.
 * The handler host is a plain recorder: it stands at Lambda's invoke seam, where the real runtime
 * has `HandlerHost`. One table for the file; every test writes under a partition key of its own and
 * its consumers filter on it, so records of earlier tests are filtered out like any other.
 */

const endpoint = inject('runtime').env.AWS_ENDPOINT_URL_DYNAMODB!;
const tableName = `stream-poller-${randomUUID()}`;
const dynamo = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
let streamArn: string;
let scratch: string;

beforeAll(async () => {
  await ensureTable(dynamo, tableName);
  streamArn = (await dynamo.send(new DescribeTableCommand({ TableName: tableName }))).Table!.LatestStreamArn!;
  scratch = await mkdtemp(join(tmpdir(), 'stream-poller-'));
});
afterAll(async () => {
  await dynamo.send(new DeleteTableCommand({ TableName: tableName }));
  dynamo.destroy();
  await rm(scratch, { recursive: true, force: true });
});

const started: StreamPoller[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((poller) => poller.stop()));
});

async function start(options: Omit<StreamPollerOptions, 'dynamoEndpoint' | 'tableName'>): Promise<StreamPoller> {
  const poller = await startStreamPoller({ dynamoEndpoint: endpoint, tableName, pollIntervalMs: 20, ...options });
  started.push(poller);
  return poller;
}

interface Call {
  readonly file: string;
  readonly functionName: string;
  readonly records: DynamoDBRecord[];
}

/** Records every invocation; `respond` plays the handler (return a batch response, or throw). */
function recorder(respond: (records: DynamoDBRecord[], call: number) => unknown = () => undefined) {
  const calls: Call[] = [];
  return {
    calls,
    /** Sort keys of each invocation, in order: what a handler saw, batch by batch. */
    batches: () => calls.map((call) => call.records.map((record) => record.dynamodb?.Keys?.sk?.S)),
    sequences: () => calls.map((call) => call.records.map((record) => record.dynamodb?.SequenceNumber)),
    async invoke(file: string, functionName: string, event: unknown) {
      const { Records } = structuredClone(event) as DynamoDBStreamEvent;
      calls.push({ file, functionName, records: Records });
      return respond(Records, calls.length);
    },
  };
}

function consumer(pk: string, overrides: Partial<StreamConsumerDefinition> = {}): StreamConsumerDefinition {
  return {
    id: 'Consumer',
    handler: 'workers/consume.ts',
    batchSize: 10,
    filters: [{ dynamodb: { Keys: { pk: { S: [pk] } } } }],
    ...overrides,
  };
}

async function put(pk: string, sk: string, attributes: Record<string, unknown> = {}): Promise<void> {
  await dynamo.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: pk }, sk: { S: sk }, ...attributes } as never }));
}

async function putAll(pk: string, sortKeys: readonly string[]): Promise<void> {
  for (const sk of sortKeys) await put(pk, sk);
}

async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const partition = () => `T#${randomUUID()}`;

describe('the event the handler receives', () => {
  it('is a DynamoDBStreamEvent with records in write order and Lambda field formats', async () => {
    // Prepare
    const pk = partition();
    const host = recorder();
    const before = Math.floor(Date.now() / 1000);
    await put(pk, 'MSG#1', { content: { S: 'hello' }, size: { N: '42' }, blob: { B: Buffer.from('bytes') } });
    await putAll(pk, ['MSG#2', 'MSG#3']);

    // Act
    const poller = await start({ consumers: [consumer(pk, { id: 'ShapeConsumer', handler: 'workers/shape.ts' })], handlers: host });
    await poller.drain();

    // Assess
    expect(host.batches()).toEqual([['MSG#1', 'MSG#2', 'MSG#3']]);
    expect(host.calls[0]).toMatchObject({ file: 'workers/shape.ts', functionName: 'ShapeConsumer' });
    expect(host.calls[0]!.records[0]).toEqual({
      eventID: expect.any(String),
      eventName: 'INSERT',
      eventVersion: expect.any(String),
      eventSource: 'aws:dynamodb',
      awsRegion: 'us-east-1',
      eventSourceARN: streamArn,
      dynamodb: {
        ApproximateCreationDateTime: expect.any(Number),
        Keys: { pk: { S: pk }, sk: { S: 'MSG#1' } },
        NewImage: {
          pk: { S: pk },
          sk: { S: 'MSG#1' },
          content: { S: 'hello' },
          size: { N: '42' },
          blob: { B: Buffer.from('bytes').toString('base64') },
        },
        SequenceNumber: expect.stringMatching(/^\d+$/),
        SizeBytes: expect.any(Number),
        StreamViewType: 'NEW_IMAGE',
      },
    });
    // Epoch seconds, not milliseconds; DynamoDB Local rounds the time down to the minute.
    const created = host.calls[0]!.records[0]!.dynamodb!.ApproximateCreationDateTime!;
    expect(created).toBeGreaterThan(before - 60);
    expect(created).toBeLessThanOrEqual(Date.now() / 1000);
    const sequences = host.sequences()[0]!.map((sequence) => BigInt(sequence!));
    expect(sequences).toEqual([...sequences].sort((a, b) => (a < b ? -1 : 1)));
  });

  it('carries at most batchSize records, in order across batches', async () => {
    // Prepare
    const pk = partition();
    const host = recorder();
    await putAll(pk, ['MSG#1', 'MSG#2', 'MSG#3', 'MSG#4', 'MSG#5']);

    // Act
    const poller = await start({ consumers: [consumer(pk, { batchSize: 2 })], handlers: host });
    await poller.drain();

    // Assess
    expect(host.batches()).toEqual([['MSG#1', 'MSG#2'], ['MSG#3', 'MSG#4'], ['MSG#5']]);
  });
});

describe('filters', () => {
  it('keep non-matching records from the handler and still move the position past them', async () => {
    // Prepare
    const pk = partition();
    const checkpointFile = join(scratch, `${randomUUID()}.json`);
    const publisher = consumer(pk, {
      id: 'Publisher',
      filters: [{ eventName: ['INSERT'], dynamodb: { Keys: { pk: { S: [pk] }, sk: { S: [{ prefix: 'MSG#' }, { prefix: 'EVT#' }] } } } }],
    });
    const host = recorder();
    await putAll(pk, ['MSG#1', 'ROOM', 'EVT#1', 'MEMBER#u1']);
    await dynamo.send(
      new UpdateItemCommand({
        TableName: tableName,
        Key: { pk: { S: pk }, sk: { S: 'MSG#1' } },
        UpdateExpression: 'SET content = :c',
        ExpressionAttributeValues: { ':c': { S: 'edited' } },
      }),
    );

    // Act
    const poller = await start({ consumers: [publisher], handlers: host, checkpointFile });
    await poller.drain();
    await poller.stop();
    // The same mapping without the event filters: anything the first one had not moved past would come now.
    const unfiltered = recorder();
    const again = await start({
      consumers: [{ ...publisher, filters: [{ dynamodb: { Keys: { pk: { S: [pk] } } } }] }],
      handlers: unfiltered,
      checkpointFile,
    });
    await again.drain();

    // Assess
    expect(host.batches()).toEqual([['MSG#1', 'EVT#1']]);
    expect(host.calls.flatMap((call) => call.records.map((record) => record.eventName))).toEqual(['INSERT', 'INSERT']);
    expect(poller.stats().recordsFilteredOut).toBeGreaterThanOrEqual(3);
    expect(unfiltered.calls).toEqual([]);
  });
});

describe('a partial batch response', () => {
  it('retries from the lowest failed record and never re-delivers the records before it', async () => {
    // Prepare
    const pk = partition();
    const host = recorder((records, call) =>
      // Failures listed out of order: the lowest sequence number counts.
      call === 1
        ? {
            batchItemFailures: [
              { itemIdentifier: records[3]!.dynamodb!.SequenceNumber },
              { itemIdentifier: records[2]!.dynamodb!.SequenceNumber },
            ],
          }
        : undefined,
    );
    await putAll(pk, ['MSG#1', 'MSG#2', 'MSG#3', 'MSG#4', 'MSG#5']);

    // Act
    const poller = await start({ consumers: [consumer(pk)], handlers: host });
    await poller.drain();

    // Assess
    const [first, second, ...rest] = host.sequences();
    expect(first).toHaveLength(5);
    expect(second).toEqual(first!.slice(2));
    expect(rest).toEqual([]);
    expect(host.batches()).toEqual([
      ['MSG#1', 'MSG#2', 'MSG#3', 'MSG#4', 'MSG#5'],
      ['MSG#3', 'MSG#4', 'MSG#5'],
    ]);
    expect(poller.stats()).toMatchObject({ invocations: 2, retries: 1, recordsDelivered: 5 });
  });

  it.each([
    { case: 'a throw', respond: () => Promise.reject(new Error('handler failed')) },
    {
      case: 'a failure naming no record of the batch',
      respond: () => ({ batchItemFailures: [{ itemIdentifier: '99999999999999999999999' }] }),
    },
    { case: 'a failure with an empty identifier', respond: () => ({ batchItemFailures: [{ itemIdentifier: '' }] }) },
    { case: 'a failure without an identifier', respond: () => ({ batchItemFailures: [{ id: 'x' }] }) },
  ])('retries the whole batch after $case', async ({ respond }) => {
    // Prepare
    const pk = partition();
    const host = recorder((_records, call) => (call === 1 ? respond() : { batchItemFailures: [] }));
    await putAll(pk, ['MSG#1', 'MSG#2', 'MSG#3']);

    // Act
    const poller = await start({ consumers: [consumer(pk)], handlers: host });
    await poller.drain();

    // Assess
    const [first, second, ...rest] = host.sequences();
    expect(first).toHaveLength(3);
    expect(second).toEqual(first);
    expect(rest).toEqual([]);
  });
});

describe('two consumers', () => {
  it('keep their own positions: one failing neither holds the other back nor repeats its records', async () => {
    // Prepare
    const pk = partition();
    let healthy = false;
    const failing = recorder(() => {
      if (!healthy) throw new Error('downstream unavailable');
    });
    const steady = recorder();
    await putAll(pk, ['MSG#1', 'MSG#2', 'MSG#3']);

    // Act
    const poller = await start({
      consumers: [consumer(pk, { id: 'Failing', batchSize: 2 }), consumer(pk, { id: 'Steady', batchSize: 2 })],
      handlers: {
        invoke: (file, functionName, event) => (functionName === 'Failing' ? failing : steady).invoke(file, functionName, event),
      },
    });
    await until(() => steady.calls.length >= 2 && failing.calls.length >= 2);
    const steadyWhileFailing = steady.batches();
    healthy = true;
    await poller.drain();

    // Assess
    expect(steadyWhileFailing).toEqual([['MSG#1', 'MSG#2'], ['MSG#3']]);
    expect(steady.batches()).toEqual([['MSG#1', 'MSG#2'], ['MSG#3']]);
    const failingBatches = failing.batches();
    expect(failingBatches.slice(0, -2).every((batch) => batch.join() === 'MSG#1,MSG#2')).toBe(true);
    expect(failingBatches.slice(-2)).toEqual([['MSG#1', 'MSG#2'], ['MSG#3']]);
  });
});

describe('a checkpoint file', () => {
  it('lets a new poller resume after the last record handed over', async () => {
    // Prepare
    const pk = partition();
    const directory = join(scratch, randomUUID());
    const checkpointFile = join(directory, 'streams.json');
    const first = recorder();
    await putAll(pk, ['MSG#1', 'MSG#2']);
    const before = await start({ consumers: [consumer(pk)], handlers: first, checkpointFile });
    await before.drain();
    await before.stop();
    await putAll(pk, ['MSG#3', 'MSG#4']);
    const second = recorder();

    // Act
    const after = await start({ consumers: [consumer(pk)], handlers: second, checkpointFile });
    await after.drain();

    // Assess
    expect(first.batches()).toEqual([['MSG#1', 'MSG#2']]);
    expect(second.batches()).toEqual([['MSG#3', 'MSG#4']]);
    // Written through a temporary file and a rename: nothing else is left behind.
    expect(await readdir(directory)).toEqual(['streams.json']);
  });

  it('holds positions per consumer: a consumer new to the file starts at the trim horizon', async () => {
    // Prepare
    const pk = partition();
    const checkpointFile = join(scratch, `${randomUUID()}.json`);
    await putAll(pk, ['MSG#1', 'MSG#2']);
    const before = await start({ consumers: [consumer(pk, { id: 'Old' })], handlers: recorder(), checkpointFile });
    await before.drain();
    await before.stop();
    const old = recorder();
    const added = recorder();

    // Act
    const after = await start({
      consumers: [consumer(pk, { id: 'Old' }), consumer(pk, { id: 'Added' })],
      handlers: { invoke: (file, functionName, event) => (functionName === 'Old' ? old : added).invoke(file, functionName, event) },
      checkpointFile,
    });
    await after.drain();

    // Assess
    expect(old.calls).toEqual([]);
    expect(added.batches()).toEqual([['MSG#1', 'MSG#2']]);
  });
});

describe('drain', () => {
  it('resolves only once every record written before it was accepted', async () => {
    // Prepare
    const pk = partition();
    const host = recorder(() => new Promise((resolve) => setTimeout(resolve, 15)));
    const poller = await start({ consumers: [consumer(pk, { batchSize: 3 })], handlers: host });
    const sortKeys = Array.from({ length: 20 }, (_, index) => `MSG#${String(index).padStart(2, '0')}`);
    await putAll(pk, sortKeys);

    // Act
    await poller.drain();

    // Assess
    expect(host.batches().flat()).toEqual(sortKeys);
  });

  it('rejects after its timeout, naming the consumer that is behind', async () => {
    // Prepare
    const pk = partition();
    const poller = await start({
      consumers: [consumer(pk, { id: 'AlwaysFailing' })],
      handlers: recorder(() => {
        throw new Error('always');
      }),
    });
    await put(pk, 'MSG#1');

    // Act
    const drained = poller.drain(300);

    // Assess
    await expect(drained).rejects.toThrow(/did not drain within 300 ms: AlwaysFailing on shardId-/);
  });
});

describe('stop', () => {
  it('returns at once while a retry is backing off, and nothing is invoked afterwards', async () => {
    // Prepare
    const pk = partition();
    const host = recorder(() => {
      throw new Error('always');
    });
    const poller = await start({ consumers: [consumer(pk)], handlers: host });
    await put(pk, 'MSG#1');
    // Retries wait 100, 200, 400, then 800 ms: the fourth call starts the 800 ms wait.
    await until(() => host.calls.length >= 4);

    // Act
    const stopping = Date.now();
    await poller.stop();
    const took = Date.now() - stopping;
    await new Promise((resolve) => setTimeout(resolve, 200));

    // Assess
    expect(took).toBeLessThan(300);
    expect(host.calls).toHaveLength(4);
  });
});

describe('start-up', () => {
  it('refuses a consumer whose filter uses an operator it cannot evaluate', async () => {
    // Act
    const starting = start({
      consumers: [consumer('p', { id: 'Wild', filters: [{ dynamodb: { Keys: { sk: { S: [{ wildcard: 'MSG#*' }] } } } }] })],
      handlers: recorder(),
    });

    // Assess
    await expect(starting).rejects.toThrow(/Stream consumer Wild: filter 1: dynamodb\.Keys\.sk\.S: unsupported operator "wildcard"/);
  });
});
