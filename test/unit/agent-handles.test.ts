import { describe, expect, it } from 'vitest';
import {
  AGENT_HANDLE_PATTERN,
  derivedHandle,
  derivedHandlePrefix,
  handleBaseOf,
  MAX_DERIVED_HANDLE_SUFFIX,
} from '#domain/ai/agent-handles';

/**
 * Handles derived from an agent's name (`POST /agents` without `handle`): every name, whatever its
 * script, makes a handle of the handle's alphabet, and every suffixed candidate stays one and
 * begins with the prefix the claims are queried by.
 */

describe('handleBaseOf', () => {
  it.each([
    ['Support', 'support'],
    ['Release Bot', 'release-bot'],
    ['  release   bot!! ', 'release-bot'],
    ['Zoë’s Helpdesk', 'zoe-s-helpdesk'],
    ['Ünïcödé', 'unicode'],
    ['42 Support', 'agent-42-support'],
    ['-dash first-', 'dash-first'],
    ['Q', 'agent-q'],
    ['🤖', 'agent'],
    ['🤖 Bot 🤖', 'bot'],
    ['助手', 'agent'],
    ['agent:support', 'agent-support'],
    ['x'.repeat(80), 'x'.repeat(32)],
    [`${'a'.repeat(31)} b`, 'a'.repeat(31)],
  ])('makes %j into %j', (name, base) => {
    expect(handleBaseOf(name)).toBe(base);
    expect(handleBaseOf(name)).toMatch(AGENT_HANDLE_PATTERN);
  });
});

describe('derivedHandle', () => {
  it.each(['support', 'ab', 'x'.repeat(32), `${'a'.repeat(29)}-bc`, 'agent'])(
    'keeps every candidate of %j valid, distinct and under the prefix',
    (base) => {
      const candidates = Array.from({ length: MAX_DERIVED_HANDLE_SUFFIX }, (_, index) => derivedHandle(base, index + 1));

      expect(candidates[0]).toBe(base);
      expect(new Set(candidates).size).toBe(candidates.length);
      for (const candidate of candidates) {
        expect(candidate).toMatch(AGENT_HANDLE_PATTERN);
        expect(candidate.startsWith(derivedHandlePrefix(base))).toBe(true);
      }
    },
  );

  it('cuts the base, not the suffix, when both do not fit', () => {
    expect(derivedHandle('x'.repeat(32), 2)).toBe(`${'x'.repeat(30)}-2`);
    expect(derivedHandle(`${'a'.repeat(29)}-bc`, 12)).toBe(`${'a'.repeat(29)}-12`);
  });
});
