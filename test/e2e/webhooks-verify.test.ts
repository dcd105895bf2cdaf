import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOf } from '../support/api';
import { type LocalProcess, startLocalProcess } from '../support/local-process';
import { hmacSha256Hex } from '../support/webhook-receiver';

/**
 * The public verification routes, `POST /webhooks/verify` (a registered webhook's secret) and
 * `POST /webhooks/verify-batch` (a given secret, one body or a batch of events), with good,
 * tampered and malformed input, and their per-IP rate limit. Signatures are made here with the
 * test's own HMAC code. Both routes count against one limit per source IP, so these tests run on
 * runtimes of their own: one with a generous limit and one with a limit of 3.
 */

const LIMIT = 3;
const SECRET = 'verify-test-secret-0123456789';
const BODY = JSON.stringify({
  type: 'message.created',
  projectId: 'demo',
  payload: { roomId: 'r1', content: 'héllo ✓' },
  createdAt: '2024-01-01T00:00:00.000Z',
});
const EVENTS = [
  { type: 'message.created', projectId: 'demo', payload: { roomId: 'r1', messageId: 1 }, createdAt: '2024-01-01T00:00:00.000Z' },
  {
    type: 'mention',
    projectId: 'demo',
    payload: { roomId: 'r1', messageId: 1, mentionedUserId: 'bob' },
    createdAt: '2024-01-01T00:00:01.000Z',
  },
];

let main: LocalProcess;
let limited: LocalProcess;
let call: ReturnType<typeof clientOf>;
let webhookId: string;
let otherWebhookId: string;
let limitedWebhookId: string;

beforeAll(async () => {
  [main, limited] = await Promise.all([
    startLocalProcess({ args: ['--in-memory'], env: { RATE_LIMIT_WEBHOOK_VERIFY_PER_MINUTE: '1000' } }),
    startLocalProcess({ args: ['--in-memory'], env: { RATE_LIMIT_WEBHOOK_VERIFY_PER_MINUTE: String(LIMIT) } }),
  ]);
  call = clientOf(main.baseUrl);
  const register = async (secret: string, on = main) => {
    const registered = await clientOf(on.baseUrl)('/webhooks/register', {
      apiKey: on.apiKey,
      body: { url: 'https://hooks.example.com/verify', eventTypes: ['message.created'], secret },
    });
    if (registered.status !== 201) throw new Error(`registration failed: ${registered.status}`);
    return registered.body.id as string;
  };
  [webhookId, otherWebhookId, limitedWebhookId] = await Promise.all([
    register(SECRET),
    register(`${SECRET}-other`),
    register(SECRET, limited),
  ]);
}, 60_000);
afterAll(() => Promise.all([main?.stop(), limited?.stop()]));

/** Flips the last hex digit: same length, same alphabet, wrong value. */
const flipLast = (signature: string) => `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`;

/** Where the caller puts the signature: the body field, the header, or the header's alias. */
const placements = [
  { where: 'the body field', put: (signature: string) => ({ fields: { signature }, headers: {} }) },
  { where: 'X-Service-Signature', put: (signature: string) => ({ fields: {}, headers: { 'x-service-signature': signature } }) },
  { where: 'X-Webhook-Signature', put: (signature: string) => ({ fields: {}, headers: { 'x-webhook-signature': signature } }) },
];

describe.each(placements)('POST /webhooks/verify with the signature in $where', ({ put }) => {
  const verify = (fields: Record<string, unknown>, signature: string) => {
    const placed = put(signature);
    return call('/webhooks/verify', { body: { ...fields, ...placed.fields }, headers: placed.headers });
  };

  it.each([
    { case: 'the right signature', webhook: () => webhookId, body: BODY, signature: () => hmacSha256Hex(SECRET, BODY), valid: true },
    { case: 'a tampered body', webhook: () => webhookId, body: `${BODY} `, signature: () => hmacSha256Hex(SECRET, BODY), valid: false },
    {
      case: 'a tampered signature',
      webhook: () => webhookId,
      body: BODY,
      signature: () => flipLast(hmacSha256Hex(SECRET, BODY)),
      valid: false,
    },
    {
      case: 'a signature made with another secret',
      webhook: () => webhookId,
      body: BODY,
      signature: () => hmacSha256Hex('not-the-secret', BODY),
      valid: false,
    },
    { case: "another webhook's id", webhook: () => otherWebhookId, body: BODY, signature: () => hmacSha256Hex(SECRET, BODY), valid: false },
  ])('answers 200 valid: $valid for $case', async ({ webhook, body, signature, valid }) => {
    // Act
    const checked = await verify({ webhookId: webhook(), body }, signature());

    // Assess
    expect(checked.status).toBe(200);
    expect(checked.body).toEqual({ valid });
  });

  it.each([
    { case: 'non-hex characters', signature: 'z'.repeat(64) },
    { case: '63 hex characters', signature: () => hmacSha256Hex(SECRET, BODY).slice(0, 63) },
    { case: '66 hex characters', signature: () => `${hmacSha256Hex(SECRET, BODY)}00` },
    { case: 'a sha256= prefix', signature: () => `sha256=${hmacSha256Hex(SECRET, BODY)}` },
    { case: 'base64 instead of hex', signature: () => Buffer.from(hmacSha256Hex(SECRET, BODY), 'hex').toString('base64') },
  ])('answers 200 valid: false (not an error) for a signature of $case', async ({ signature }) => {
    // Act
    const checked = await verify({ webhookId, body: BODY }, typeof signature === 'function' ? signature() : signature);

    // Assess
    expect(checked.status).toBe(200);
    expect(checked.body).toEqual({ valid: false });
  });

  it.each([
    { case: 'an unknown webhook id of the right shape', id: 'wh_demo_0123456789abcdef01234567' },
    { case: 'a webhook id of another project', id: () => webhookId.replace('wh_demo_', 'wh_other-project_') },
  ])('answers 404 webhook_not_found for $case', async ({ id }) => {
    // Act
    const checked = await verify({ webhookId: typeof id === 'function' ? id() : id, body: BODY }, hmacSha256Hex(SECRET, BODY));

    // Assess
    expect(checked.status).toBe(404);
    expect(checked.body.error.code).toBe('webhook_not_found');
  });
  it('answers 400 validation_failed for an id that is not a webhook id', async () => {
    // Act
    const checked = await verify({ webhookId: 'nothing-like-an-id', body: BODY }, hmacSha256Hex(SECRET, BODY));

    // Assess
    expect(checked.status).toBe(400);
    expect(checked.body.error.code).toBe('validation_failed');
  });
});

describe.each(placements)('POST /webhooks/verify-batch with the signature in $where', ({ put }) => {
  const verifyBatch = (fields: Record<string, unknown>, signature: string) => {
    const placed = put(signature);
    return call('/webhooks/verify-batch', { body: { ...fields, ...placed.fields }, headers: placed.headers });
  };
  const signedEvents = () => hmacSha256Hex(SECRET, JSON.stringify(EVENTS));
  const tamperedEvents = [EVENTS[0], { ...EVENTS[1], payload: { ...EVENTS[1]?.payload, mentionedUserId: 'mallory' } }];

  it.each([
    {
      case: 'a single body, right signature',
      fields: { secret: SECRET, body: BODY },
      signature: () => hmacSha256Hex(SECRET, BODY),
      valid: true,
    },
    {
      case: 'a single body, tampered',
      fields: { secret: SECRET, body: BODY.replace('héllo', 'hello') },
      signature: () => hmacSha256Hex(SECRET, BODY),
      valid: false,
    },
    {
      case: 'a single body, another secret',
      fields: { secret: `${SECRET}x`, body: BODY },
      signature: () => hmacSha256Hex(SECRET, BODY),
      valid: false,
    },
    {
      case: 'a single body, tampered signature',
      fields: { secret: SECRET, body: BODY },
      signature: () => flipLast(hmacSha256Hex(SECRET, BODY)),
      valid: false,
    },
    { case: 'a batch, right signature', fields: { secret: SECRET, events: EVENTS }, signature: signedEvents, valid: true, count: 2 },
    {
      case: 'a batch with one event tampered',
      fields: { secret: SECRET, events: tamperedEvents },
      signature: signedEvents,
      valid: false,
      count: 2,
    },
    {
      case: 'a batch in another order',
      fields: { secret: SECRET, events: [...EVENTS].reverse() },
      signature: signedEvents,
      valid: false,
      count: 2,
    },
    {
      case: 'a batch missing an event',
      fields: { secret: SECRET, events: EVENTS.slice(0, 1) },
      signature: signedEvents,
      valid: false,
      count: 1,
    },
    {
      case: 'a batch, non-hex signature',
      fields: { secret: SECRET, events: EVENTS },
      signature: () => 'g'.repeat(64),
      valid: false,
      count: 2,
    },
    {
      case: 'a batch, 32-character signature',
      fields: { secret: SECRET, events: EVENTS },
      signature: () => signedEvents().slice(0, 32),
      valid: false,
      count: 2,
    },
    {
      case: 'a single body, non-hex signature',
      fields: { secret: SECRET, body: BODY },
      signature: () => `${'x'.repeat(63)}!`,
      valid: false,
    },
    {
      case: 'a single body, 65-character signature',
      fields: { secret: SECRET, body: BODY },
      signature: () => `${hmacSha256Hex(SECRET, BODY)}a`,
      valid: false,
    },
  ])('answers 200 valid: $valid for $case', async ({ fields, signature, valid, count }) => {
    // Act
    const checked = await verifyBatch(fields, signature());

    // Assess
    expect(checked.status).toBe(200);
    expect(checked.body).toEqual(count === undefined ? { valid } : { valid, count });
  });
});

describe.each([
  { route: '/webhooks/verify', target: () => ({ webhookId }) },
  { route: '/webhooks/verify-batch', target: () => ({ secret: SECRET }) },
])('$route with a timestamp and a delivery id (X-Service-Signature-V2)', ({ route, target }) => {
  const DELIVERY_ID = 'whd_0123456789abcdef';
  const secondsAgo = (seconds: number) => String(Math.floor(Date.now() / 1000) - seconds);
  /** The receiver's own HMAC over `<timestamp>.<deliveryId>.<body>`. */
  const timestamped = (timestamp: string, deliveryId = DELIVERY_ID, secret = SECRET) =>
    hmacSha256Hex(secret, `${timestamp}.${deliveryId}.${BODY}`);

  it.each([
    {
      case: 'the right signature in the body field',
      age: 0,
      sign: timestamped,
      inHeader: false,
      expected: { valid: true, withinReplayWindow: true },
    },
    {
      case: 'the right signature in X-Service-Signature-V2',
      age: 0,
      sign: timestamped,
      inHeader: true,
      expected: { valid: true, withinReplayWindow: true },
    },
    {
      case: 'a signature made 299 s ago',
      age: 299,
      sign: timestamped,
      inHeader: false,
      expected: { valid: true, withinReplayWindow: true },
    },
    {
      case: 'a right signature made 301 s ago (a replay)',
      age: 301,
      sign: timestamped,
      inHeader: false,
      expected: { valid: false, withinReplayWindow: false },
    },
    {
      case: 'a signature over another delivery id',
      age: 0,
      sign: (timestamp: string) => timestamped(timestamp, 'whd_another'),
      inHeader: false,
      expected: { valid: false, withinReplayWindow: true },
    },
    {
      case: 'the body-only signature',
      age: 0,
      sign: () => hmacSha256Hex(SECRET, BODY),
      inHeader: false,
      expected: { valid: false, withinReplayWindow: true },
    },
  ])('answers 200 $expected for $case', async ({ age, sign, inHeader, expected }) => {
    // Prepare
    const timestamp = secondsAgo(age);
    const signature = sign(timestamp);

    // Act
    const checked = await call(route, {
      body: { ...target(), body: BODY, timestamp, deliveryId: DELIVERY_ID, ...(inHeader ? {} : { signature }) },
      headers: inHeader ? { 'x-service-signature-v2': signature } : {},
    });

    // Assess
    expect(checked.status).toBe(200);
    expect(checked.body).toEqual(expected);
  });

  it.each([
    { case: 'a timestamp without a delivery id', fields: () => ({ timestamp: secondsAgo(0) }), field: 'body.deliveryId' },
    { case: 'a delivery id without a timestamp', fields: () => ({ deliveryId: DELIVERY_ID }), field: 'body.timestamp' },
    {
      case: 'a timestamp that is not Unix seconds',
      fields: () => ({ timestamp: '2024-01-01T00:00:00Z', deliveryId: DELIVERY_ID }),
      field: 'body.timestamp',
    },
  ])('answers 400 validation_failed naming $field for $case', async ({ fields, field }) => {
    // Act
    const checked = await call(route, { body: { ...target(), body: BODY, signature: timestamped(secondsAgo(0)), ...fields() } });

    // Assess
    expect(checked.status).toBe(400);
    expect(checked.body.error.code).toBe('validation_failed');
    expect(JSON.stringify(checked.body.error.details)).toContain(field);
  });
});

describe('malformed verification requests', () => {
  it.each([
    { route: '/webhooks/verify', case: 'no signature anywhere', body: () => ({ webhookId, body: BODY }) },
    { route: '/webhooks/verify', case: 'a missing webhookId', body: () => ({ body: BODY, signature: hmacSha256Hex(SECRET, BODY) }) },
    { route: '/webhooks/verify', case: 'a missing body', body: () => ({ webhookId, signature: hmacSha256Hex(SECRET, BODY) }) },
    { route: '/webhooks/verify', case: 'a body that is an object', body: () => ({ webhookId, body: { a: 1 }, signature: 'a'.repeat(64) }) },
    { route: '/webhooks/verify', case: 'a signature that is a number', body: () => ({ webhookId, body: BODY, signature: 42 }) },
    { route: '/webhooks/verify', case: 'an unknown field', body: () => ({ webhookId, body: BODY, signature: 'a'.repeat(64), extra: 1 }) },
    { route: '/webhooks/verify-batch', case: 'no signature anywhere', body: () => ({ secret: SECRET, body: BODY }) },
    { route: '/webhooks/verify-batch', case: 'a missing secret', body: () => ({ body: BODY, signature: 'a'.repeat(64) }) },
    { route: '/webhooks/verify-batch', case: 'neither body nor events', body: () => ({ secret: SECRET, signature: 'a'.repeat(64) }) },
    {
      route: '/webhooks/verify-batch',
      case: 'both body and events',
      body: () => ({ secret: SECRET, body: BODY, events: EVENTS, signature: 'a'.repeat(64) }),
    },
    {
      route: '/webhooks/verify-batch',
      case: 'events that are not an array',
      body: () => ({ secret: SECRET, events: { 0: 'x' }, signature: 'a'.repeat(64) }),
    },
    {
      route: '/webhooks/verify-batch',
      case: 'an empty events array',
      body: () => ({ secret: SECRET, events: [], signature: 'a'.repeat(64) }),
    },
    {
      route: '/webhooks/verify-batch',
      case: 'an unknown field',
      body: () => ({ secret: SECRET, body: BODY, signature: 'a'.repeat(64), mode: 'x' }),
    },
  ])('$route answers 400 to $case', async ({ route, body }) => {
    // Act
    const refused = await call(route, { body: body() });

    // Assess
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('validation_failed');
  });

  it.each(['/webhooks/verify', '/webhooks/verify-batch'])('%s answers 400 to a body that is not JSON', async (route) => {
    // Act
    const refused = await call(route, { rawBody: '{"secret": "abc", "body": ', headers: { 'content-type': 'application/json' } });

    // Assess
    expect(refused.status).toBe(400);
  });
});

describe(`RATE_LIMIT_WEBHOOK_VERIFY_PER_MINUTE=${LIMIT}`, () => {
  /** Waits out the end of a minute window so a burst cannot straddle two windows. */
  async function awayFromWindowEdge(): Promise<void> {
    const intoWindow = Date.now() % 60_000;
    if (intoWindow > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoWindow + 50));
  }

  it('answers the 4th verification from one IP with 429 and Retry-After, and verify-batch shares the limit', async () => {
    // Prepare
    const callLimited = clientOf(limited.baseUrl);
    const signature = hmacSha256Hex(SECRET, BODY);
    const verify = () => callLimited('/webhooks/verify', { body: { webhookId: limitedWebhookId, body: BODY, signature } });
    await awayFromWindowEdge();
    const allowed = [];
    for (let sent = 0; sent < LIMIT; sent++) allowed.push(await verify());

    // Act
    const refused = await verify();
    const refusedBatch = await callLimited('/webhooks/verify-batch', { body: { secret: SECRET, body: BODY, signature } });

    // Assess
    expect(allowed.map((response) => [response.status, response.body])).toEqual(
      Array.from({ length: LIMIT }, () => [200, { valid: true }]),
    );
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refusedBatch.status).toBe(429);
    expect(refusedBatch.headers.get('retry-after')).toMatch(/^\d+$/);
  }, 90_000);
});
