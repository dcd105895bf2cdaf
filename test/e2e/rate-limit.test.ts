import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalProcess, startLocalProcess } from '../support/local-process';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { connectWelcomed } from '../support/ws';

const LIMIT = 3;

/** Waits out the end of a minute window so a burst cannot straddle two windows. */
async function awayFromWindowEdge(): Promise<void> {
  const intoWindow = Date.now() % 60_000;
  if (intoWindow > 55_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoWindow + 50));
}

describe.each([
  { keys: 'user', otherUserLimited: false },
  { keys: 'room', otherUserLimited: true },
])(`RATE_LIMIT_MESSAGES_PER_MINUTE=${LIMIT} keyed by $keys`, ({ keys, otherUserLimited }) => {
  let local: LocalProcess;
  const tokens: Record<string, string> = {};

  let receiver: WebhookReceiver;

  const post = async (user: string, content: string, roomId = 'limited') => {
    const response = await fetch(`${local.baseUrl}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens[user]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ roomId, content }),
    });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as any };
  };

  beforeAll(async () => {
    local = await startLocalProcess({
      args: ['--in-memory'],
      env: { RATE_LIMIT_MESSAGES_PER_MINUTE: String(LIMIT), RATE_LIMIT_MESSAGE_KEYS: keys },
    });
    for (const user of ['alice', 'bob', 'carol', 'dave']) {
      const response = await fetch(`${local.baseUrl}/auth/token`, {
        method: 'POST',
        headers: { 'x-service-api-key': local.apiKey, 'content-type': 'application/json' },
        body: JSON.stringify({ userId: user }),
      });
      tokens[user] = ((await response.json()) as { token: string }).token;
    }
    await fetch(`${local.baseUrl}/rooms`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens.alice}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: 'limited', type: 'group', members: ['bob'] }),
    });
    // Rooms of their own for the announcement test, so its budget is whole whichever key counts.
    for (const [owner, roomId] of [
      ['carol', 'announced'],
      ['dave', 'sentinel'],
    ]) {
      await fetch(`${local.baseUrl}/rooms`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tokens[owner as string]}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id: roomId, type: 'group' }),
      });
    }
    receiver = await startWebhookReceiver();
    const registered = await fetch(`${local.baseUrl}/webhooks/register`, {
      method: 'POST',
      headers: { 'x-service-api-key': local.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, eventTypes: ['message.created'] }),
    });
    expect(registered.status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await local?.stop();
    await receiver?.close();
  });

  it('answers 429 rate_limited with Retry-After past the limit, without storing the message', async () => {
    // Prepare
    await awayFromWindowEdge();
    for (let sent = 0; sent < LIMIT; sent++) expect((await post('alice', `ok ${sent}`)).status).toBe(201);

    // Act
    const refused = await post('alice', 'one too many');
    const other = await post('bob', 'from someone else');

    // Assess
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    const retryAfter = Number(refused.retryAfter);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(other.status).toBe(otherUserLimited ? 429 : 201);
    const history = await fetch(`${local.baseUrl}/rooms/limited/messages`, { headers: { authorization: `Bearer ${tokens.alice}` } });
    const contents = ((await history.json()) as { messages: { content: string }[] }).messages.map((m) => m.content);
    expect(contents).not.toContain('one too many');
  }, 90_000);

  it('announces exactly the accepted messages: a message refused over REST or a socket emits no message.created', async () => {
    // Prepare
    await awayFromWindowEdge();
    const socket = await connectWelcomed('announced', tokens.carol as string, { history: 0, wsUrl: local.baseUrl.replace(/^http/, 'ws') });
    const before = receiver.requests.length;
    for (let sent = 0; sent < LIMIT; sent++) expect((await post('carol', `announced ${sent}`, 'announced')).status).toBe(201);

    // Act
    const refusedFrame = socket.next((frame) => frame.type === 'error');
    socket.send({ type: 'message', content: 'refused on the socket', clientMessageId: 'refused-frame' });
    const frame = await refusedFrame;
    const refused = await post('carol', 'refused over REST', 'announced');
    await socket.close();
    // A later message of another user and room: once its event is in, the refused ones had their time.
    expect((await post('dave', 'sentinel', 'sentinel')).status).toBe(201);

    // Assess
    expect(frame).toMatchObject({ error: { code: 'rate_limited' } });
    expect(refused.status).toBe(429);
    await receiver.waitForRequests(before + LIMIT + 1, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const announced = receiver.requests.slice(before).map((request) => JSON.parse(request.rawBody));
    expect(announced.every((event) => event.type === 'message.created')).toBe(true);
    const contents = announced.map((event) => event.payload.content as string).sort();
    expect(contents).toEqual([...Array.from({ length: LIMIT }, (_, sent) => `announced ${sent}`), 'sentinel'].sort());
  }, 90_000);
});
