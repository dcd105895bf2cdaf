import { describe, expect, it } from 'vitest';
import { isConditionCheckFailure, isConditionFailure } from '#shared/db/client';

/** The two readings of a failed conditional write, on the error shapes the SDK raises. */

const conditional = Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException' });
const cancelled = (...codes: string[]) =>
  Object.assign(new Error('Transaction cancelled'), {
    name: 'TransactionCanceledException',
    CancellationReasons: codes.map((Code) => ({ Code })),
  });

describe('condition failures', () => {
  it.each([
    ['a failed condition of a single write', conditional, true, true],
    ['a transaction cancelled by one of its conditions', cancelled('None', 'ConditionalCheckFailed'), true, true],
    ['a transaction cancelled by a conflict', cancelled('TransactionConflict', 'None'), true, false],
    ['a transaction cancelled by throttling', cancelled('ThrottlingError'), true, false],
    ['a transaction cancelled without reasons', cancelled(), true, false],
    ['another error', Object.assign(new Error('boom'), { name: 'ProvisionedThroughputExceededException' }), false, false],
    ['no error object', undefined, false, false],
  ])('%s', (_, error, broad, strict) => {
    expect(isConditionFailure(error)).toBe(broad);
    expect(isConditionCheckFailure(error)).toBe(strict);
  });
});
