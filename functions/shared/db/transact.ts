import { TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { db } from './client';

/** One part of an all-or-nothing write; entity modules build them, the caller puts them together. */
export type TransactPart = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** How often a transaction cancelled by another one on the same items is tried again before its error surfaces. */
const CONFLICT_ATTEMPTS = 4;
const CONFLICT_BACKOFF_MS = 15;

const cancellationCodes = (error: unknown): (string | undefined)[] => {
  const reasons = (error as { CancellationReasons?: ({ Code?: string } | null)[] } | null)?.CancellationReasons;
  return Array.isArray(reasons) ? reasons.map((reason) => reason?.Code) : [];
};

const isTransactionCancelled = (error: unknown) => (error as { name?: string } | null)?.name === 'TransactionCanceledException';

/**
 * True when the transaction was cancelled only because it ran into another one on the same items
 * (or was throttled), and none of its own conditions failed: the answer is "try again", not "no".
 */
export function isTransactionConflict(error: unknown): boolean {
  if (!isTransactionCancelled(error)) return false;
  const codes = cancellationCodes(error);
  return !codes.includes('ConditionalCheckFailed') && codes.some((code) => code === 'TransactionConflict' || code === 'ThrottlingError');
}

/**
 * The indexes of the parts whose condition failed, when `error` is a cancelled transaction: lets a
 * caller answer for the part that said no (the user's cap, not the project's).
 */
export function failedConditionParts(error: unknown): number[] {
  if (!isTransactionCancelled(error)) return [];
  return cancellationCodes(error).flatMap((code, index) => (code === 'ConditionalCheckFailed' ? [index] : []));
}

/**
 * Why each part of a cancelled transaction said no, in the parts' order (empty for any other
 * error): its code (`None` for a part that had nothing against it) and, for a part that asked for
 * `ReturnValuesOnConditionCheckFailure: ALL_OLD` and found an item, that item. The document client
 * leaves an error's items marshalled; they are unmarshalled here.
 */
export function cancellationReasons(error: unknown): { code?: string; item?: Record<string, unknown> }[] {
  if (!isTransactionCancelled(error)) return [];
  const reasons = (error as { CancellationReasons?: ({ Code?: string; Item?: Record<string, unknown> } | null)[] }).CancellationReasons;
  if (!Array.isArray(reasons)) return [];
  return reasons.map((reason) => ({
    code: reason?.Code,
    ...(reason?.Item ? { item: unmarshall(reason.Item as Parameters<typeof unmarshall>[0]) } : {}),
  }));
}

/**
 * Writes `parts` all or nothing. A cancellation by a concurrent transaction is retried with a
 * short jittered backoff (DynamoDB cancels both sides of a conflict and leaves the retry to the
 * caller); a failed condition is thrown at once, for `isConditionFailure` to recognise. A caller
 * with a cheaper way round a conflict than waiting it out sets `conflictAttempts`.
 */
export async function transactWrite(parts: readonly TransactPart[], options: { conflictAttempts?: number } = {}): Promise<void> {
  const attempts = options.conflictAttempts ?? CONFLICT_ATTEMPTS;
  for (let attempt = 1; ; attempt++) {
    try {
      await db.send(new TransactWriteCommand({ TransactItems: [...parts] }));
      return;
    } catch (error) {
      if (attempt >= attempts || !isTransactionConflict(error)) throw error;
      await new Promise((resolve) => setTimeout(resolve, CONFLICT_BACKOFF_MS * attempt * (0.5 + Math.random())));
    }
  }
}

/**
 * True when a conditional write failed because its condition did not hold: a plain conditional
 * write, or a transaction one of whose conditions failed (`CancellationReasons`). A transaction
 * cancelled only by a conflict with another one, or by throttling, is not an answer such as "not
 * yours" but a retryable error (`transactWrite` retries it).
 */
export function isConditionFailure(error: unknown): boolean {
  const name = (error as { name?: string } | null)?.name;
  if (name === 'ConditionalCheckFailedException') return true;
  const reasons = (error as { CancellationReasons?: ({ Code?: string } | null)[] } | null)?.CancellationReasons;
  return (
    name === 'TransactionCanceledException' && Array.isArray(reasons) && reasons.some((reason) => reason?.Code === 'ConditionalCheckFailed')
  );
}
