import { afterEach, describe, expect, it, vi } from 'vitest';

/**
 * The spec's model choice: summaries take `AI_SUMMARY_MODEL`, then `AI_SUGGEST_MODEL`, then
 * `AI_MODEL`; suggestions `AI_SUGGEST_MODEL`, then `AI_MODEL`; agents their own model if
 * `AI_ALLOWED_MODELS` (unset: the three settings' models) allows it, then `AI_MODEL`. Settings are
 * read at module load, so each case loads the modules afresh.
 */

const SETTINGS = ['AI_MODEL', 'AI_SUGGEST_MODEL', 'AI_SUMMARY_MODEL', 'AI_ALLOWED_MODELS'] as const;
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

async function allowListWith(settings: Partial<Record<(typeof SETTINGS)[number], string>>) {
  await modelsWith(settings);
  const { requireAllowedAgentModel } = await import('#domain/ai/assistant');
  return requireAllowedAgentModel;
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
    expect(modelFor('agent', suggestions)).toBe(suggestions);
  });
});

describe('agent models', () => {
  it.each([
    [{ AI_MODEL: 'main', AI_SUGGEST_MODEL: 'suggest' }, ['main', 'suggest'], ['pricey', 'summary'], 'main'],
    [{}, ['gpt-4o-mini'], ['gpt-4o', 'main'], 'gpt-4o-mini'],
    [{ AI_MODEL: 'main', AI_ALLOWED_MODELS: ' pricey , other ' }, ['pricey', 'other'], ['main', 'pricey,other'], 'main'],
  ] as const)('with %o: agents may name %o, not %o (those answer with %s)', async (settings, allowed, refused, fallback) => {
    // Act
    const requireAllowed = await allowListWith(settings);
    const modelFor = await modelsWith(settings);

    // Assess
    for (const model of allowed) {
      expect(() => requireAllowed(model)).not.toThrow();
      expect(modelFor('agent', model)).toBe(model);
    }
    for (const model of refused) {
      expect(() => requireAllowed(model)).toThrow(expect.objectContaining({ statusCode: 400, code: 'model_not_allowed' }));
      // An agent stored before the list changed answers with AI_MODEL instead.
      expect(modelFor('agent', model)).toBe(fallback);
    }
  });

  it('stops the cold start on an AI_ALLOWED_MODELS of commas only, naming it', async () => {
    // Act
    const loading = modelsWith({ AI_ALLOWED_MODELS: ' , ' });

    // Assess
    await expect(loading).rejects.toThrow(/AI_ALLOWED_MODELS/);
  });
});
