import { afterEach, describe, expect, it, vi } from 'vitest';

/**
 * The spec's model choice: summaries take `AI_SUMMARY_MODEL`, then `AI_SUGGEST_MODEL`, then
 * `AI_MODEL`; suggestions `AI_SUGGEST_MODEL`, then `AI_MODEL`; agents their own model, then
 * `AI_MODEL`. Settings are read at module load, so each case loads the modules afresh.
 */

const SETTINGS = ['AI_MODEL', 'AI_SUGGEST_MODEL', 'AI_SUMMARY_MODEL'] as const;
const saved = Object.fromEntries(SETTINGS.map((name) => [name, process.env[name]]));

async function modelsWith(settings: Partial<Record<(typeof SETTINGS)[number], string>>) {
  for (const name of SETTINGS) {
    if (settings[name] === undefined) delete process.env[name];
    else process.env[name] = settings[name];
  }
  vi.resetModules();
  const { modelFor } = await import('#domain/ai/assistant');
  return modelFor;
}

afterEach(() => {
  for (const name of SETTINGS) {
    if (saved[name] === undefined) delete process.env[name];
    else process.env[name] = saved[name];
  }
  vi.resetModules();
});

describe('modelFor', () => {
  it.each([
    [{ AI_MODEL: 'main', AI_SUGGEST_MODEL: 'suggest', AI_SUMMARY_MODEL: 'summary' }, 'summary', 'suggest', 'main'],
    [{ AI_MODEL: 'main', AI_SUGGEST_MODEL: 'suggest' }, 'suggest', 'suggest', 'main'],
    [{ AI_MODEL: 'main' }, 'main', 'main', 'main'],
    [{}, 'gpt-4o-mini', 'gpt-4o-mini', 'gpt-4o-mini'],
  ] as const)('with %o: summaries %s, suggestions %s, agents %s', async (settings, summary, suggestions, agent) => {
    // Act
    const modelFor = await modelsWith(settings);

    // Assess
    expect(['thread_summary', 'room_summary', 'handoff_summary'].map((purpose) => modelFor(purpose as 'thread_summary'))).toEqual([
      summary,
      summary,
      summary,
    ]);
    expect(modelFor('suggestions')).toBe(suggestions);
    expect(modelFor('agent')).toBe(agent);
    expect(modelFor('agent', 'agent-own-model')).toBe('agent-own-model');
  });
});
