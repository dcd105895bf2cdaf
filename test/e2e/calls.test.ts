import { TokenVerifier } from 'livekit-server-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../lib/local/runtime';
import { api, clientOf, createTestProject, newUser, type TestProject, uniqueId } from '../support/api';
import { CALLS_SERVER } from '../support/global-setup';

/**
 * Call tokens and voice AI latencies. The shared runtime has the call-server settings
 * (`test/support/global-setup.ts`): its tokens are checked with livekit-server-sdk's own verifier,
 * an implementation independent of the service's (`jose`). A runtime of this file's own has none:
 * its tokens are stubs, and its token limit is 2 a minute.
 */

let project: TestProject;
let member: { userId: string; token: string };
let guest: { userId: string; token: string };
let outsider: { userId: string; token: string };
let roomId: string;

beforeAll(async () => {
  project = await createTestProject('calls');
  [member, guest, outsider] = await Promise.all([
    newUser(project, 'member'),
    newUser(project, 'guest', ['guest']),
    newUser(project, 'outsider'),
  ]);
  roomId = uniqueId('room');
  await api('/rooms', { token: member.token, body: { id: roomId, type: 'group' } });
  await api(`/rooms/${roomId}/members`, { token: member.token, body: { userId: guest.userId, role: 'guest' } });
});

const tokenFor = (token: string, room = roomId) => api('/admin/calls/token', { token, body: { roomId: room } });

describe('POST /admin/calls/token with the call-server settings', () => {
  it('answers a LiveKit token that verifies with the configured secret and grants joining the room', async () => {
    // Act
    const issued = await tokenFor(member.token);

    // Assess
    expect(issued.status).toBe(200);
    const room = `${project.projectId}:${roomId}`;
    expect(issued.body).toMatchObject({ url: CALLS_SERVER.url, room, identity: member.userId, stub: false });
    const claims = await new TokenVerifier(CALLS_SERVER.apiKey, CALLS_SERVER.apiSecret).verify(issued.body.token);
    expect(claims).toMatchObject({
      iss: CALLS_SERVER.apiKey,
      sub: member.userId,
      name: member.userId,
      video: { room, roomJoin: true, canPublish: true, canSubscribe: true, canPublishData: true },
    });
    expect((claims.exp as number) - (claims.nbf as number)).toBe(600);
    expect(Math.abs((claims.nbf as number) - Date.now() / 1000)).toBeLessThan(30);
    expect(issued.body.expiresAt).toBe(new Date((claims.exp as number) * 1000).toISOString());
  });

  it('does not verify with another secret or as another API key', async () => {
    // Prepare
    const { token } = (await tokenFor(member.token)).body;

    // Act
    const otherSecret = new TokenVerifier(CALLS_SERVER.apiKey, `${CALLS_SERVER.apiSecret}-other`).verify(token);
    const otherKey = new TokenVerifier('APIother', CALLS_SERVER.apiSecret).verify(token);

    // Assess
    await expect(otherSecret).rejects.toThrow();
    await expect(otherKey).rejects.toThrow();
  });

  it('refuses a user of the guest project role (the route takes members and above), though a guest of the room', async () => {
    // Act
    const issued = await tokenFor(guest.token);

    // Assess
    expect(issued).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
  });

  it('gives a project member who is a room guest a token without publishing', async () => {
    // Prepare
    const roomGuest = await newUser(project, 'room-guest');
    await api(`/rooms/${roomId}/members`, { token: member.token, body: { userId: roomGuest.userId, role: 'guest' } });

    // Act
    const issued = await tokenFor(roomGuest.token);

    // Assess
    const claims = await new TokenVerifier(CALLS_SERVER.apiKey, CALLS_SERVER.apiSecret).verify(issued.body.token);
    expect(claims.video).toMatchObject({ roomJoin: true, canPublish: false, canSubscribe: true, canPublishData: false });
  });

  it('refuses users outside the room: 403 not_a_member, also for a public room and a project admin; 404 for no room', async () => {
    // Prepare
    const publicRoomId = uniqueId('public');
    await api('/rooms', { token: member.token, body: { id: publicRoomId, type: 'public' } });
    const admin = await newUser(project, 'admin', ['admin']);

    // Act
    const [privateRoom, publicRoom, asAdmin, noRoom, apiKey] = await Promise.all([
      tokenFor(outsider.token),
      tokenFor(outsider.token, publicRoomId),
      tokenFor(admin.token),
      tokenFor(member.token, uniqueId('missing')),
      api('/admin/calls/token', { apiKey: project.apiKey, body: { roomId } }),
    ]);

    // Assess
    expect(privateRoom).toMatchObject({ status: 403, body: { error: { code: 'not_a_member' } } });
    expect(publicRoom).toMatchObject({ status: 403, body: { error: { code: 'not_a_member' } } });
    expect(asAdmin).toMatchObject({ status: 403, body: { error: { code: 'not_a_member' } } });
    expect(noRoom).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
    expect(apiKey).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
  });
});

describe('POST /admin/calls/token without call-server settings (a runtime of its own)', () => {
  let own: LocalRuntime;
  let call: ReturnType<typeof clientOf>;
  let token: string;
  let ownRoomId: string;
  const OPERATOR_KEY = 'calls-stub-operator-key-0123456789';

  beforeAll(async () => {
    // The shared runtime's settings reach this worker's environment (test/support/runtime-env.ts).
    delete process.env.CALLS_SERVER_URL;
    delete process.env.CALLS_API_KEY;
    delete process.env.CALLS_API_SECRET;
    own = await startLocalRuntime({
      port: 0,
      consumers: false,
      env: { CHAT_OPERATOR_KEY: OPERATOR_KEY, RATE_LIMIT_CALL_TOKENS_PER_MINUTE: '2' },
    });
    call = clientOf(own.baseUrl);
    const created = await call('/platform/projects', { body: { name: 'calls-stub' }, headers: { 'x-service-operator-key': OPERATOR_KEY } });
    token = (await call('/auth/token', { apiKey: created.body.apiKey, body: { userId: 'caller' } })).body.token;
    ownRoomId = uniqueId('room');
    await call('/rooms', { token, body: { id: ownRoomId, type: 'group' } });
  }, 120_000);

  afterAll(async () => {
    await own?.stop();
  }, 60_000);

  it('answers a stub clearly marked, which no call server accepts, then 429 past the limit', async () => {
    // Act: three tokens inside one minute's window (a window turning over between them resets the count).
    // The clocks read before the first request and after the third: a response's Date header is
    // taken after its count, so it can name the next minute while the count fell in the last one.
    const startedMinute = Math.floor(Date.now() / 60_000);
    const [first, second] = [
      await call('/admin/calls/token', { token, body: { roomId: ownRoomId } }),
      await call('/admin/calls/token', { token, body: { roomId: ownRoomId } }),
    ];
    const third = await call('/admin/calls/token', { token, body: { roomId: ownRoomId } });
    const endedMinute = Math.floor(Date.now() / 60_000);

    // Assess
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ stub: true, url: null, identity: 'caller', room: expect.stringContaining(`:${ownRoomId}`) });
    expect(first.body.token).toMatch(/^stub_/);
    await expect(new TokenVerifier(CALLS_SERVER.apiKey, CALLS_SERVER.apiSecret).verify(first.body.token)).rejects.toThrow();
    expect(second.status).toBe(200);
    if (startedMinute === endedMinute) {
      expect(third).toMatchObject({ status: 429, body: { error: { code: 'rate_limited' } } });
      expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
    }
  });
});

describe('voice AI latencies', () => {
  let admin: string;
  beforeAll(async () => {
    admin = await project.token(uniqueId('admin'), ['admin']);
  });

  it('has no statistics before any sample: counts 0, percentiles and verdicts null', async () => {
    // Prepare
    const fresh = await createTestProject('voice-empty');

    // Act
    const stats = await api('/admin/voice-ai/stats', { apiKey: fresh.apiKey });

    // Assess
    expect(stats.status).toBe(200);
    expect(stats.body.window).toBe('1h');
    expect(stats.body.kinds).toEqual({
      realtime: { count: 0, p50Ms: null, p95Ms: null, targetP95Ms: 300, met: null },
      chunked_rest: { count: 0, p50Ms: null, p95Ms: null, targetP95Ms: 500, met: null },
      barge_in: { count: 0, p50Ms: null, p95Ms: null, targetP95Ms: 500, met: null },
    });
  });

  it('records single samples and batches, and answers p50 and p95 per kind beside the targets', async () => {
    // Prepare: realtime 100 samples 100..199 ms (p95 within target), chunked REST 20 at 450 and 5 at 900 (p95 over 500)
    const realtime = Array.from({ length: 100 }, (_, index) => ({ kind: 'realtime', latencyMs: 100 + index }));
    const chunked = [
      ...Array(20).fill({ kind: 'chunked_rest', latencyMs: 450 }),
      ...Array(5).fill({ kind: 'chunked_rest', latencyMs: 900 }),
    ];

    // Act
    const batch = await api('/admin/voice-ai/metrics', { token: admin, body: { samples: realtime } });
    const secondBatch = await api('/admin/voice-ai/metrics', { apiKey: project.apiKey, body: { samples: chunked } });
    const single = await api('/admin/voice-ai/metrics', { token: admin, body: { kind: 'barge_in', latencyMs: 420 } });
    const stats = await api('/admin/voice-ai/stats?window=15m', { token: admin });

    // Assess
    expect([batch.body, secondBatch.body, single.body]).toEqual([{ recorded: 100 }, { recorded: 25 }, { recorded: 1 }]);
    expect(stats.body.window).toBe('15m');
    expect(stats.body.kinds).toEqual({
      realtime: { count: 100, p50Ms: 150, p95Ms: 200, targetP95Ms: 300, met: true },
      chunked_rest: { count: 25, p50Ms: 460, p95Ms: 910, targetP95Ms: 500, met: false },
      barge_in: { count: 1, p50Ms: 430, p95Ms: 430, targetP95Ms: 500, met: true },
    });
  });

  it('refuses a bad window, a sample out of bounds and a batch over 100', async () => {
    // Act
    const [window, tooLong, negative, tooMany, both] = await Promise.all([
      api('/admin/voice-ai/stats?window=2d', { token: admin }),
      api('/admin/voice-ai/stats?window=25h', { token: admin }),
      api('/admin/voice-ai/metrics', { token: admin, body: { kind: 'realtime', latencyMs: -1 } }),
      api('/admin/voice-ai/metrics', { token: admin, body: { samples: Array(101).fill({ kind: 'realtime', latencyMs: 1 }) } }),
      api('/admin/voice-ai/metrics', {
        token: admin,
        body: { kind: 'realtime', latencyMs: 1, samples: [{ kind: 'realtime', latencyMs: 1 }] },
      }),
    ]);

    // Assess
    for (const response of [window, tooLong, negative, tooMany, both]) expect(response.status).toBe(400);
    expect(window.body.error.details).toContainEqual(expect.objectContaining({ field: 'query.window' }));
    expect(tooLong.body.error.details).toContainEqual(expect.objectContaining({ field: 'query.window' }));
    expect(negative.body.error.details).toContainEqual(expect.objectContaining({ field: 'body.latencyMs' }));
    expect(tooMany.body.error.details).toContainEqual(expect.objectContaining({ field: 'body.samples' }));
    expect(both.body.error.details).toContainEqual(expect.objectContaining({ field: 'body.samples' }));
  });
});
