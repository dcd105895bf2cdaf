import { describe, expect, it } from 'vitest';
import { describeAreaStack } from '../../support/chat-stack/area-suite.ts';
import { render, viewOf } from '../../support/chat-stack/synthesized.ts';

/** The Bridges area's nested stack against its entries in the wiring table (checks: `area-suite.ts`). */
describeAreaStack('Bridges');

describe('the bridge relay', () => {
  it("subscribes to bridged rooms' message.created events only, so a room without a bridge costs it no queue message", () => {
    const view = viewOf('Bridges');
    const subscriptions = Object.values(view.template.findResources('AWS::SNS::Subscription')).filter(
      (subscription) => render(view, subscription.Properties.Endpoint) === '<BridgeRelay queue>.Arn',
    );

    expect(subscriptions).toHaveLength(1);
    expect(subscriptions[0]?.Properties.FilterPolicy).toEqual({ type: ['message.created'], bridged: ['true'] });
  });
});
