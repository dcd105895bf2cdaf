import { describe, expect, it } from 'vitest';
import { replaceOverrides } from '#domain/flags/feature-flags';
import { countRefusal, enforceRouteGuards } from '#domain/guards/route-guards';
import { config } from '#shared/config';
import { ForbiddenError, RateLimitedError } from '#shared/errors';
import { httpRoutes, webSocketFrames } from '#wiring';
import { uniqueId } from '../support/api';

/**
 * The one place a wiring-table entry's feature flag and rate limit are enforced, against DynamoDB
 * Local (flag overrides and rate-limit windows are items), for entries shaped as routes and frames.
 */

const refusal = (promise: Promise<unknown>) =>
  promise.then(
    () => 'passed',
    (error: Error) => (error instanceof ForbiddenError ? `403 ${error.code}` : error instanceof RateLimitedError ? '429' : error.message),
  );

describe('a feature flag on an entry', () => {
  it("refuses with 403 feature_disabled while the flag is off for the caller's project, and passes otherwise", async () => {
    // Prepare
    const [off, untouched] = [uniqueId('flags-off').toLowerCase(), uniqueId('flags-default').toLowerCase()];
    await replaceOverrides(off, { voice_messages: false }, 'test');

    // Act
    const outcomes = await Promise.all([
      refusal(enforceRouteGuards({ flag: 'voice_messages' }, { projectId: off })),
      refusal(enforceRouteGuards({ flag: 'voice_messages' }, { projectId: untouched })),
      refusal(enforceRouteGuards({ flag: 'reconnect_backoff_fluxy' }, { projectId: untouched })),
      refusal(enforceRouteGuards({ flag: 'voice_messages' }, {})),
    ]);

    // Assess
    expect(outcomes).toEqual(['403 feature_disabled', 'passed', '403 feature_disabled', 'passed']);
  });
});

describe.each([
  { per: 'ip' as const, subject: () => ({ sourceIp: uniqueId('198.51.100') }) },
  { per: 'user' as const, subject: () => ({ projectId: uniqueId('p').toLowerCase(), userId: uniqueId('user') }) },
  { per: 'connection' as const, subject: () => ({ projectId: uniqueId('p').toLowerCase(), connectionId: uniqueId('conn') }) },
])('a rate limit per $per', ({ per, subject }) => {
  it("admits the setting's number of calls in a window, refuses the next with 429, and counts each subject apart", async () => {
    // Prepare
    const entry = {
      rateLimit: { bucket: uniqueId('bucket'), per, setting: 'RATE_LIMIT_CLIENT_EVENTS_PER_SECOND' as const, windowSeconds: 60 },
    };
    const [first, second] = [subject(), subject()];
    const limit = config.RATE_LIMIT_CLIENT_EVENTS_PER_SECOND;

    // Act
    const admitted = [];
    for (let call = 0; call < limit; call++) admitted.push(await refusal(enforceRouteGuards(entry, first)));
    const over = await refusal(enforceRouteGuards(entry, first));
    const other = await refusal(enforceRouteGuards(entry, second));

    // Assess
    expect(admitted).toEqual(Array(limit).fill('passed'));
    expect(over).toBe('429');
    expect(other).toBe('passed');
  });
});

describe('the wiring table', () => {
  it('limits per connection only frames, whose subject has one', () => {
    // Act
    const routesPerConnection = httpRoutes.filter((route) => route.rateLimit?.per === 'connection').map((route) => route.id);

    // Assess
    expect(routesPerConnection).toEqual([]);
    expect(webSocketFrames.find((frame) => frame.type === 'client-*')?.rateLimit).toMatchObject({ per: 'connection', windowSeconds: 1 });
  });

  it('does not limit a service principal per user: a call without a user passes a per-user limit', async () => {
    // Prepare
    const entry = {
      rateLimit: { bucket: uniqueId('bucket'), per: 'user' as const, setting: 'RATE_LIMIT_CLIENT_EVENTS_PER_SECOND' as const },
    };
    const service = { projectId: uniqueId('p').toLowerCase() };

    // Act
    const outcomes = [];
    for (let call = 0; call <= config.RATE_LIMIT_CLIENT_EVENTS_PER_SECOND; call++)
      outcomes.push(await refusal(enforceRouteGuards(entry, service)));

    // Assess
    expect(new Set(outcomes)).toEqual(new Set(['passed']));
  });
});

describe('a limit that counts refusals', () => {
  it('counts a refusal on a path longer than a key may be, apart from another such path, and refuses past the limit', async () => {
    // Prepare: paths a client may make as long as its request line allows, differing only at the end
    const entry = {
      rateLimit: {
        bucket: uniqueId('bucket'),
        per: 'ip' as const,
        setting: 'RATE_LIMIT_CLIENT_EVENTS_PER_SECOND' as const,
        counts: 'refusals' as const,
      },
    };
    const sourceIp = uniqueId('198.51.100');
    const [longPath, otherLongPath] = [`/webhooks/bridge/slack/${'a'.repeat(3000)}x`, `/webhooks/bridge/slack/${'a'.repeat(3000)}y`];
    const limit = config.RATE_LIMIT_CLIENT_EVENTS_PER_SECOND;

    // Act
    for (let count = 0; count <= limit; count++) await countRefusal(entry, { sourceIp, path: longPath }, 401);
    const onThatPath = await refusal(enforceRouteGuards(entry, { sourceIp, path: longPath }));
    const onTheOther = await refusal(enforceRouteGuards(entry, { sourceIp, path: otherLongPath }));

    // Assess
    expect(onThatPath).toBe('429');
    expect(onTheOther).toBe('passed');
  });
});
