import { beforeAll, describe, expect, it } from 'vitest';
import { eventSubscribers } from '#wiring';
import { render, type Synthesized, synthesize, synthesizedApp, viewOf } from '../support/chat-stack/synthesized.ts';

/**
 * Subscribers wake only when needed (issue 29, point 3): each subscription's filter policy in the
 * template names the attributes the publisher sets, and a subscriber whose feature is off at synth
 * (no `AI_BASE_URL`) has no queue, subscription or function at all.
 */

/** Every SNS subscription of the app, by the subscriber whose queue it delivers to. */
function subscriptionsOf(synth: Synthesized): Map<string, Record<string, unknown>> {
  const found = new Map<string, Record<string, unknown>>();
  for (const view of synth.views.values()) {
    for (const subscription of Object.values(view.template.findResources('AWS::SNS::Subscription'))) {
      const endpoint = render(view, subscription.Properties.Endpoint) as string;
      const id = /^<(\w+) queue>\.Arn$/.exec(endpoint)?.[1];
      if (id) found.set(id, subscription.Properties.FilterPolicy);
    }
  }
  return found;
}

const withoutAi = () => synthesize({ nagChecks: false });
let plain: Synthesized;

beforeAll(() => {
  plain = withoutAi();
});

describe('the filter policies of the message.created subscribers', () => {
  it('let a message through only with the attribute its subscriber needs; the figure counter alone takes every message', () => {
    // Act
    const policies = subscriptionsOf(synthesizedApp());

    // Assess
    expect(Object.fromEntries(policies)).toMatchObject({
      WatcherNotifier: { type: ['message.created'], watched: ['true'] },
      PushDispatcher: { type: ['message.created'], pushTargets: ['true'] },
      AgentMentions: { type: ['message.created'], agentMention: ['true'] },
      BridgeRelay: { type: ['message.created'], bridged: ['true'] },
      WebhookDispatcher: { webhook: ['true'] },
      NotificationWriter: {
        $or: [{ type: ['handoff', 'room.summary'] }, { type: ['message.created'], notify: ['true'] }],
      },
      FigureEventCounter: { type: ['message.created'] },
      RoomSummaryScheduler: { type: ['message.created'] },
    });
    const unfiltered = [...policies]
      .filter(([, policy]) => {
        const types = (policy as { type?: string[] } | undefined)?.type;
        return Object.keys(policy ?? {}).length === 1 && types?.includes('message.created');
      })
      .map(([id]) => id);
    // RoomSummaryScheduler counts every message for AI summaries, and exists only with AI (below).
    expect(unfiltered.sort()).toEqual(['FigureEventCounter', 'RoomSummaryScheduler']);
  });
});

describe('subscribers whose feature is off at synth', () => {
  it('are not created without AI_BASE_URL: no AgentMentions or RoomSummaryScheduler queue, subscription or function', () => {
    // Act
    const policies = subscriptionsOf(plain);
    const ai = viewOf('Ai', plain);

    // Assess
    const aiOnly = eventSubscribers.filter((subscriber) => subscriber.requiresSetting === 'AI_BASE_URL').map((subscriber) => subscriber.id);
    expect(aiOnly.sort()).toEqual(['AgentMentions', 'RoomSummaryScheduler']);
    for (const id of aiOnly) {
      expect(policies.has(id), id).toBe(false);
      expect(ai.stack.functions.has(id), id).toBe(false);
      expect(Object.keys(ai.template.findResources('AWS::SQS::Queue')).filter((logicalId) => logicalId.startsWith(id))).toEqual([]);
    }
    // Every other subscriber is there, with the same policy as with AI.
    expect([...policies.keys()].sort()).toEqual(
      eventSubscribers
        .filter((subscriber) => !aiOnly.includes(subscriber.id))
        .map((subscriber) => subscriber.id)
        .sort(),
    );
  });

  it('are created with AI_BASE_URL', () => {
    // Act
    const policies = subscriptionsOf(synthesizedApp());

    // Assess
    expect(policies.has('AgentMentions')).toBe(true);
    expect(policies.has('RoomSummaryScheduler')).toBe(true);
    expect(viewOf('Ai').stack.functions.has('AgentMentions')).toBe(true);
  });
});
