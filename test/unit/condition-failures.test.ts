import { describe, expect, it } from 'vitest';
import { failedConditionParts, isConditionFailure, isTransactionConflict } from '#shared/db/transact';

/** The readings of a failed write, on the error shapes the SDK raises. */

const conditional = Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException' });
const cancelled = (...codes: string[]) =>
  Object.assign(new Error('Transaction cancelled'), {
    name: 'TransactionCanceledException',
    CancellationReasons: codes.map((Code) => ({ Code })),
  });

describe('condition failures', () => {
  it.each([
    ['a failed condition of a single write', conditional, true, false, []],
    ['a transaction cancelled by one of its conditions', cancelled('None', 'ConditionalCheckFailed'), true, false, [1]],
    ['a transaction cancelled by a condition and a conflict', cancelled('ConditionalCheckFailed', 'TransactionConflict'), true, false, [0]],
    ['a transaction cancelled by a conflict', cancelled('TransactionConflict', 'None'), false, true, []],
    ['a transaction cancelled by throttling', cancelled('ThrottlingError'), false, true, []],
    ['a transaction cancelled without reasons', cancelled(), false, false, []],
    ['another error', Object.assign(new Error('boom'), { name: 'ProvisionedThroughputExceededException' }), false, false, []],
    ['no error object', undefined, false, false, []],
  ])('%s', (_, error, conditionFailed, retryable, failedParts) => {
    expect(isConditionFailure(error)).toBe(conditionFailed);
    expect(isTransactionConflict(error)).toBe(retryable);
    expect(failedConditionParts(error)).toEqual(failedParts);
  });
});
