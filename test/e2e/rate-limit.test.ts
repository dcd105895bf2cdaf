import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalProcess, startLocalProcess } from '../support/local-process';

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

  const post = async (user: string, content: string) => {
    const response = await fetch(`${local.baseUrl}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tokens[user]}`, 'content-type': 'application/json' },
      body: JSON.stringify({ roomId: 'limited', content }),
    });
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: (await response.json()) as any };
  };

  beforeAll(async () => {
    local = await startLocalProcess({
      args: ['--in-memory'],
      env: { RATE_LIMIT_MESSAGES_PER_MINUTE: String(LIMIT), RATE_LIMIT_MESSAGE_KEYS: keys },
    });
    for (const user of ['alice', 'bob']) {
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
  }, 60_000);
  afterAll(() => local?.stop());

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
});
