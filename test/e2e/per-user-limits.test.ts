import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOf } from '../support/api';
import { pngBytes, sendBytes, upload, wavBytes } from '../support/attachments';
import { type LocalProcess, startLocalProcess } from '../support/local-process';
import { fcmToken, newSubscription } from '../support/push/fixtures';

/**
 * Per-user rate limits of routes that write for the caller and fan out behind the answer (a room,
 * push targets copied into every room of the user), on a runtime of its own whose limits are low
 * enough to reach: past them a user gets 429 with `Retry-After` and nothing is written, while other
 * users and the API key go on.
 */

const LIMIT = 2;

let local: LocalProcess;
let call: ReturnType<typeof clientOf>;

beforeAll(async () => {
  local = await startLocalProcess({
    args: ['--in-memory'],
    env: {
      RATE_LIMIT_ROOM_CREATION_PER_MINUTE: String(LIMIT),
      RATE_LIMIT_PUSH_REGISTRATION_PER_MINUTE: String(LIMIT),
      RATE_LIMIT_UPLOADS_PER_MINUTE: String(LIMIT),
    },
  });
  call = clientOf(local.baseUrl);
}, 60_000);
afterAll(() => local?.stop());

let users = 0;
async function newToken() {
  const issued = await call('/auth/token', { apiKey: local.apiKey, body: { userId: `limited-${process.pid}-${++users}` } });
  return issued.body.token as string;
}

/** The limits count fixed minutes: a burst must not straddle two. */
async function insideOneMinute() {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 5000) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

describe('RATE_LIMIT_ROOM_CREATION_PER_MINUTE', () => {
  it('refuses a user past the limit with 429 rate_limited and creates nothing; another user and the API key go on', async () => {
    // Prepare
    const [token, other] = [await newToken(), await newToken()];
    const room = (id: string) => ({ id, type: 'group' });
    await insideOneMinute();

    // Act
    const admitted = [];
    for (let index = 0; index < LIMIT; index++) admitted.push(await call('/rooms', { token, body: room(`ok-${users}-${index}`) }));
    const refused = await call('/rooms', { token, body: room(`refused-${users}`) });
    const byOther = await call('/rooms', { token: other, body: room(`other-${users}`) });
    const byKey = await call('/rooms', { apiKey: local.apiKey, body: room(`key-${users}`) });

    // Assess
    expect(admitted.map((answer) => answer.status)).toEqual(Array(LIMIT).fill(201));
    expect(refused).toMatchObject({ status: 429, body: { error: { code: 'rate_limited' } } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await call(`/rooms/refused-${users}`, { apiKey: local.apiKey })).status).toBe(404);
    expect([byOther.status, byKey.status]).toEqual([201, 201]);
  });
});

describe('RATE_LIMIT_PUSH_REGISTRATION_PER_MINUTE', () => {
  it('counts device registrations and web push subscriptions together, per user, and stores nothing past it', async () => {
    // Prepare
    const [token, other] = [await newToken(), await newToken()];
    await insideOneMinute();

    // Act
    const device = await call('/push/devices', { token, body: { platform: 'fcm', token: fcmToken() } });
    const subscription = await call('/push/web/subscribe', { token, body: newSubscription() });
    const refusedDevice = await call('/push/devices', { token, body: { platform: 'fcm', token: fcmToken() } });
    const refusedSubscription = await call('/push/web/subscribe', { token, body: newSubscription() });
    const byOther = await call('/push/devices', { token: other, body: { platform: 'fcm', token: fcmToken() } });

    // Assess
    expect([device.status, subscription.status, byOther.status]).toEqual([201, 201, 201]);
    for (const refused of [refusedDevice, refusedSubscription]) {
      expect(refused).toMatchObject({ status: 429, body: { error: { code: 'rate_limited' } } });
    }
    expect((await call('/push/devices', { token })).body.devices).toHaveLength(1);
    expect((await call('/push/web/subscriptions', { token })).body.subscriptions).toHaveLength(1);
  });
});

describe('RATE_LIMIT_UPLOADS_PER_MINUTE', () => {
  it('refuses uploads and voice messages past one shared budget with 429 rate_limited, storing nothing; another user goes on', async () => {
    // Prepare
    const [token, other] = [await newToken(), await newToken()];
    await insideOneMinute();

    // Act
    const admitted = [];
    for (let index = 0; index < LIMIT; index++) admitted.push(await upload(token, pngBytes(), 'image/png', { baseUrl: local.baseUrl }));
    const refusedUpload = await upload(token, pngBytes(), 'image/png', { baseUrl: local.baseUrl });
    const refusedVoice = await sendBytes('/messages/voice?roomId=any-room', wavBytes(0.1), {
      token,
      contentType: 'audio/wav',
      baseUrl: local.baseUrl,
    });
    const byOther = await upload(other, pngBytes(), 'image/png', { baseUrl: local.baseUrl });

    // Assess
    expect(admitted.map((answer) => answer.status)).toEqual(Array(LIMIT).fill(201));
    expect(refusedUpload).toMatchObject({ status: 429, body: { error: { code: 'rate_limited' } } });
    expect(refusedVoice).toMatchObject({ status: 429, body: { error: { code: 'rate_limited' } } });
    expect(byOther.status).toBe(201);
  });
});
