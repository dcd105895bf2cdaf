import { describe, expect, it } from 'vitest';
import { closestMatch, editDistance } from '#shared/did-you-mean';
import { EVENT_TYPES } from '#shared/events';

/** "Did you mean …?" suggests only a clear near miss: one candidate, close for the name's length. */

describe('editDistance', () => {
  it.each([
    ['', '', 0],
    ['kitten', 'sitting', 3],
    ['message.create', 'message.created', 1],
    ['abc', 'abc', 0],
    ['abc', '', 3],
  ])('%s → %s is %i', (a, b, distance) => {
    // Act & Assess
    expect(editDistance(a, b)).toBe(distance);
  });

  it('stops past the limit, however long the input', () => {
    // Act
    const far = editDistance('x'.repeat(100_000), 'parent_id', 3);

    // Assess
    expect(far).toBe(4);
  });
});

describe('closestMatch', () => {
  const messageKeys = ['roomId', 'content', 'parent_id', 'attachments', 'clientMessageId', 'userId', 'createdAt'];

  it.each([
    { input: 'parentId', candidates: messageKeys, expected: 'parent_id' },
    { input: 'parentID', candidates: messageKeys, expected: 'parent_id' },
    { input: 'contnet', candidates: messageKeys, expected: 'content' },
    { input: 'room_id', candidates: messageKeys, expected: 'roomId' },
    { input: 'message.create', candidates: EVENT_TYPES, expected: 'message.created' },
    { input: 'member.joined', candidates: EVENT_TYPES, expected: 'member_joined' },
    { input: 'grop', candidates: ['public', 'group', 'dm'], expected: 'group' },
  ])('suggests $expected for $input', ({ input, candidates, expected }) => {
    // Act & Assess
    expect(closestMatch(input, candidates)).toBe(expected);
  });

  it.each([
    { case: 'a word unlike any candidate', input: 'bogusField', candidates: messageKeys },
    { case: 'an event type far from every one', input: 'message.exploded', candidates: EVENT_TYPES },
    { case: 'a short word two edits away', input: 'xy', candidates: ['id'] },
    { case: 'two candidates equally close', input: 'rol', candidates: ['role', 'rold'] },
    { case: 'a name that is itself a candidate', input: 'content', candidates: messageKeys },
    { case: 'no candidates', input: 'content', candidates: [] },
  ])('suggests nothing for $case', ({ input, candidates }) => {
    // Act & Assess
    expect(closestMatch(input, candidates)).toBeUndefined();
  });
});
