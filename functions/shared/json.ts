import * as z from '#shared/schema';

/**
 * JSON with every non-ASCII character escaped. SQS rejects some code points (U+FFFE, U+FFFF), and
 * SNS delivers raw messages into SQS, so events and jobs travel escaped; escaped JSON parses back
 * to the same value everywhere.
 */
export const asciiJson = (value: unknown) =>
  JSON.stringify(value).replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * Whether an object in `value`, at any depth, has the empty string as a key. DynamoDB stores no
 * map with one ("Empty attribute name"), so client JSON that travels through the table (event data)
 * is refused with one rather than failing to store.
 */
export function hasEmptyKey(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (typeof next !== 'object' || next === null) continue;
    if (!Array.isArray(next) && Object.hasOwn(next, '')) return true;
    pending.push(...Object.values(next));
  }
  return false;
}

/** A client-sent JSON object that may travel through the table (event data, client event data). */
export const storableJsonObject = z
  .record(z.string(), z.unknown())
  .check(z.refine((data) => !hasEmptyKey(data), 'must not have an empty key, at any depth'));
