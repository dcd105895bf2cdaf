import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../lib/local/runtime';
import { clientOf, uniqueId } from '../support/api';
import { openSse, type SseStream } from '../support/sse';

/**
 * The caps on open SSE streams (`GET /rooms/{roomId}/stream`): every tenant's streams share the
 * streaming function's reserved concurrency, so one user may hold at most 2 here and one project
 * at most 3 (`SSE_MAX_STREAMS_PER_USER`, `SSE_MAX_STREAMS_PER_PROJECT`), on a runtime of this
 * suite's own with those caps, in this process (like the fuzz suite's).
 */

const OPERATOR_KEY = 'stream-caps-operator-key-0123456789';
const PER_USER = 2;
const PER_PROJECT = 3;

let runtime: LocalRuntime;
let call: ReturnType<typeof clientOf>;
beforeAll(async () => {
  runtime = await startLocalRuntime({
    port: 0,
    consumers: false,
    env: { CHAT_OPERATOR_KEY: OPERATOR_KEY, SSE_MAX_STREAMS_PER_USER: String(PER_USER), SSE_MAX_STREAMS_PER_PROJECT: String(PER_PROJECT) },
  });
  call = clientOf(runtime.baseUrl);
}, 60_000);
afterAll(async () => {
  await runtime?.stop();
}, 30_000);

const streams: SseStream[] = [];
afterEach(() => {
  for (const stream of streams.splice(0)) stream.close();
});

/** A project with a public room, and tokens of its users on demand. */
async function tenant() {
  const created = await call('/platform/projects', { body: { name: 'stream-caps' }, headers: { 'x-service-operator-key': OPERATOR_KEY } });
  if (created.status !== 201) throw new Error(`project creation failed: ${created.status} ${JSON.stringify(created.body)}`);
  const { projectId, apiKey } = created.body as { projectId: string; apiKey: string };
  const token = async (userId = uniqueId('user')) => {
    const issued = await call('/auth/token', { apiKey, body: { userId } });
    return issued.body.token as string;
  };
  const room = await call('/rooms', { token: await token('owner'), body: { type: 'public', name: 'streams' } });
  if (room.status !== 201) throw new Error(`room creation failed: ${room.status} ${JSON.stringify(room.body)}`);
  return { projectId, token, roomId: room.body.id as string };
}

async function stream(roomId: string, token: string) {
  const opened = await openSse(`/rooms/${roomId}/stream`, { token, baseUrl: runtime.baseUrl });
  streams.push(opened);
  return opened;
}

function expectTooManyStreams(refused: SseStream) {
  expect(refused.status).toBe(429);
  expect(refused.body).toMatchObject({ error: { code: 'too_many_streams', message: expect.any(String) } });
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
}

describe('open SSE streams', () => {
  it(`are capped at ${PER_USER} per user: the next is refused with 429 too_many_streams, another user still connects`, async () => {
    // Prepare
    const { roomId, token } = await tenant();
    const alice = await token();
    const open = [await stream(roomId, alice), await stream(roomId, alice)];

    // Act
    const refused = await stream(roomId, alice);
    const bob = await stream(roomId, await token());

    // Assess
    expect(open.map((sse) => sse.status)).toEqual([200, 200]);
    expectTooManyStreams(refused);
    expect(bob.status).toBe(200);
  });

  it(`are capped at ${PER_PROJECT} per project, whatever its users; another project still connects`, async () => {
    // Prepare
    const first = await tenant();
    const open = [await stream(first.roomId, await first.token()), await stream(first.roomId, await first.token())];
    open.push(await stream(first.roomId, await first.token()));
    const second = await tenant();

    // Act
    const refused = await stream(first.roomId, await first.token());
    const elsewhere = await stream(second.roomId, await second.token());

    // Assess
    expect(open.map((sse) => sse.status)).toEqual([200, 200, 200]);
    expectTooManyStreams(refused);
    expect(elsewhere.status).toBe(200);
  });

  it('give their slot back when the client goes away', async () => {
    // Prepare
    const { roomId, token } = await tenant();
    const alice = await token();
    const [first] = [await stream(roomId, alice), await stream(roomId, alice)];
    await first?.started();

    // Act: the server notices within one poll interval (1 s)
    first?.close();
    let again = await stream(roomId, alice);
    for (let tries = 0; again.status === 429 && tries < 20; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      again = await stream(roomId, alice);
    }

    // Assess
    expect(again.status).toBe(200);
  });

  it('come back from a stream that died without giving its slot back, once its lease expired', async () => {
    // Prepare: two leases of a user whose function crashed, expired a second ago
    const { projectId, roomId, token } = await tenant();
    const userId = uniqueId('crashed');
    const { takeStreamLease } = await import('#shared/db/stream-leases');
    for (const streamId of ['crashed-1', 'crashed-2']) {
      await takeStreamLease(projectId, userId, { streamId, expiresAt: Date.now() - 1000 }, { user: PER_USER, project: PER_PROJECT });
    }

    // Act
    const reopened = await stream(roomId, await token(userId));

    // Assess
    expect(reopened.status).toBe(200);
  });
});
