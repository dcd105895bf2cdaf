import { describe, expect, it } from 'vitest';
import { createdAtMsOf, ID_SLOTS_PER_MS, messageIdFor } from '#domain/messages/message-ids';
import { MESSAGE_ID_DIGITS, messageSk } from '#shared/db/keys';

describe('message ids', () => {
  it('encode their creation millisecond, so id order is time order', () => {
    const at = Date.parse('2026-01-02T03:04:05.678Z');
    const id = messageIdFor('p|r-time', at, false);
    expect(createdAtMsOf(id)).toBe(at);
    expect(messageIdFor('p|r-time', at - 1, false)).toBeLessThan(at * ID_SLOTS_PER_MS);
  });

  it('strictly increase for live messages of one room within one millisecond', () => {
    const at = Date.now();
    const ids = Array.from({ length: 50 }, () => messageIdFor('p|r-burst', at, true));
    for (let i = 1; i < ids.length; i++) expect(ids[i]).toBeGreaterThan(ids[i - 1] as number);
  });

  it('stay safe integers and sort lexically as numbers in the sort key', () => {
    const late = messageIdFor('p|r', Date.parse('2200-01-01T00:00:00Z'), false);
    const early = messageIdFor('p|r', Date.parse('2000-01-01T00:00:00Z'), false);
    expect(Number.isSafeInteger(late)).toBe(true);
    expect(String(late).length).toBeLessThanOrEqual(MESSAGE_ID_DIGITS);
    expect(messageSk(early) < messageSk(late)).toBe(true);
  });
});
