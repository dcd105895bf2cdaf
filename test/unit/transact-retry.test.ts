import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

/**
 * `transactWrite` against a server that speaks DynamoDB's JSON protocol and cancels the first
 * transactions it gets, the way DynamoDB cancels both sides of a conflict (DynamoDB Local never
 * does, so this is where the retry is shown).
 */

let server: Server;
let cancelNext: string[][] = [];
let received = 0;

const cancellation = (codes: string[]) => ({
  __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
  message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(', ')}]`,
  CancellationReasons: codes.map((Code) => ({ Code })),
});

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received++;
      const codes = cancelNext.shift();
      response.writeHead(codes ? 400 : 200, { 'content-type': 'application/x-amz-json-1.0' });
      response.end(JSON.stringify(codes ? cancellation(codes) : {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  process.env.AWS_ENDPOINT_URL_DYNAMODB = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  process.env.AWS_ACCESS_KEY_ID = 'test';
  process.env.AWS_SECRET_ACCESS_KEY = 'test';
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

beforeEach(() => {
  cancelNext = [];
  received = 0;
});

const part = { Put: { TableName: 'unit', Item: { pk: 'a', sk: 'b' } } };

describe('transactWrite', () => {
  it('tries again when a conflict with another transaction cancelled it', async () => {
    const { transactWrite } = await import('#shared/db/transact');
    cancelNext = [['TransactionConflict'], ['None', 'TransactionConflict']];
    await transactWrite([part]);
    expect(received).toBe(3);
  });

  it('throws a failed condition at once, for the caller to answer', async () => {
    const { transactWrite, isConditionFailure } = await import('#shared/db/transact');
    cancelNext = [['ConditionalCheckFailed', 'TransactionConflict']];
    const error = await transactWrite([part, part]).catch((thrown: unknown) => thrown);
    expect(isConditionFailure(error)).toBe(true);
    expect(received).toBe(1);
  });

  it('gives up after a bounded number of conflicts, with the conflict as the error', async () => {
    const { transactWrite, isTransactionConflict } = await import('#shared/db/transact');
    cancelNext = Array.from({ length: 10 }, () => ['TransactionConflict']);
    const error = await transactWrite([part]).catch((thrown: unknown) => thrown);
    expect(isTransactionConflict(error)).toBe(true);
    expect(received).toBe(4);
  });
});
