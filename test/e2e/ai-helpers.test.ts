import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type OpenAiServer, startOpenAiServer } from '../support/ai/openai-server';
import { clientOf } from '../support/api';
import { type LocalProcess, startLocalProcess } from '../support/local-process';
import { eventually, receiverAcceptsSignature, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * Thread summaries, reply suggestions, room summaries and the AI quota, end to end on a runtime of
 * its own whose `AI_BASE_URL` is a local OpenAI-compatible server (real HTTP, the real request and
 * answer shapes) that records every prompt and can be told to fail, stall or answer garbage.
 */

const OPERATOR_KEY = 'ai-helpers-operator-key-0123456';
const MODELS = { summary: 'summary-model', suggest: 'suggest-model', main: 'main-model' };
const SUMMARY_SYSTEM = 'You summarize chat threads';
const ROOM_SUMMARY_SYSTEM = 'You summarize chat rooms';
const SUMMARY_INTERVAL_SECONDS = 60;
const PROMPT_MAX_CHARS = 6000;
const AI_KEY = 'sk-ai-helpers-key-0123456789abcdef';

let local: LocalProcess;
let call: ReturnType<typeof clientOf>;
let ai: OpenAiServer;
let apiKey: string;
/** The runtime without AI of the last describe: it starts beside this file's own, not after its tests (about 10 s). */
let plainStarting: Promise<LocalProcess>;

beforeAll(async () => {
  ai = await startOpenAiServer();
  // The test process carries the shared runtime's settings, AI_BASE_URL among them: cleared here.
  plainStarting = startLocalProcess({ args: ['--in-memory'], env: { AI_BASE_URL: '' } });
  // Awaited by its test, which fails if it did not start; not an unhandled rejection meanwhile.
  plainStarting.catch(() => undefined);
  local = await startLocalProcess({
    args: ['--in-memory'],
    env: {
      CHAT_OPERATOR_KEY: OPERATOR_KEY,
      RATE_LIMIT_MESSAGES_PER_MINUTE: '100000',
      // The default, stated: the shared runtime's environment, which this process inherits, raises it.
      RATE_LIMIT_REPLY_SUGGESTIONS_PER_MINUTE: '10',
      AI_BASE_URL: ai.url,
      AI_API_KEY: AI_KEY,
      // The provider failures' warn lines are read below.
      POWERTOOLS_LOG_LEVEL: 'WARN',
      AI_MODEL: MODELS.main,
      AI_SUGGEST_MODEL: MODELS.suggest,
      AI_SUMMARY_MODEL: MODELS.summary,
      AI_TIMEOUT_MS: '800',
      AI_ATTEMPTS: '2',
      AI_PROMPT_MAX_CHARS: String(PROMPT_MAX_CHARS),
      ROOM_SUMMARY_MIN_MESSAGES: '20',
      // Long enough for the burst below to fall inside one interval on a loaded CI machine (it took 32 s there once).
      ROOM_SUMMARY_MIN_INTERVAL_SECONDS: String(SUMMARY_INTERVAL_SECONDS),
      WEBHOOK_RETRY_TIME_SCALE: '0.001',
    },
  });
  call = clientOf(local.baseUrl);
  apiKey = local.apiKey;
}, 90_000);

afterAll(async () => {
  await local?.stop();
  await (await plainStarting?.catch(() => undefined))?.stop();
  await ai?.close();
});

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

async function tokenFor(userId: string, key = apiKey) {
  const issued = await call('/auth/token', { apiKey: key, body: { userId } });
  expect(issued.status).toBe(201);
  return issued.body.token as string;
}

interface User {
  readonly userId: string;
  readonly token: string;
}
async function user(prefix = 'user', key = apiKey): Promise<User> {
  const userId = unique(prefix);
  return { userId, token: await tokenFor(userId, key) };
}

async function room(members: readonly User[], key = apiKey) {
  const roomId = unique('room');
  const created = await call('/rooms', { apiKey: key, body: { id: roomId, type: 'group', members: members.map((m) => m.userId) } });
  expect(created.status).toBe(201);
  return roomId;
}

async function post(author: User, roomId: string, content: string, parentId?: number) {
  const sent = await call('/messages', { token: author.token, body: { roomId, content, ...(parentId ? { parent_id: parentId } : {}) } });
  expect(sent.status, JSON.stringify(sent.body)).toBe(201);
  return sent.body.id as number;
}

const summarize = (caller: User, roomId: string, messageId: number) =>
  call(`/messages/${messageId}/summary`, { token: caller.token, body: { roomId } });

/** The thread lines of the last summary prompt, as `[id] user: content`. */
function lastThreadPrompt(): string[] {
  const request = ai.requests.findLast((candidate) => candidate.messages[0]?.content.startsWith(SUMMARY_SYSTEM));
  const text = request?.messages.at(-1)?.content ?? '';
  return text.split('\n').slice(1);
}
const idsIn = (lines: readonly string[]) => lines.map((line) => Number(/^\[(\d+)\]/.exec(line)?.[1]));

describe('thread summary', () => {
  it('needs 3 messages: 2 are 400 thread_too_short, 3 are summarized as bullet lines', async () => {
    // Arrange
    const author = await user();
    const roomId = await room([author]);
    const root = await post(author, roomId, 'Should we ship on Friday?');
    const first = await post(author, roomId, 'Yes, QA is done', root);

    // Act
    const tooShort = await summarize(author, roomId, first);
    await post(author, roomId, 'Agreed, ship it', root);
    const summarized = await eventually('the reply indexed', async () => {
      const answer = await summarize(author, roomId, root);
      return answer.status === 200 && answer;
    });

    // Assess
    expect(tooShort).toMatchObject({ status: 400, body: { error: { code: 'thread_too_short' } } });
    expect(summarized.body).toEqual({
      summary: expect.stringMatching(/^- .+(\n- .+)*$/),
      rootMessageId: root,
      messageCount: 3,
      truncated: false,
    });
    expect(ai.requests.at(-1)?.model).toBe(MODELS.summary);
  });

  it('collects a tree breadth-first from the root, whichever of its messages is named', async () => {
    // Arrange: R ← A, B; A ← C, E; B ← D (posted in the order R A B C D E)
    const author = await user();
    const roomId = await room([author]);
    const r = await post(author, roomId, 'root');
    const a = await post(author, roomId, 'a', r);
    const b = await post(author, roomId, 'b', r);
    const c = await post(author, roomId, 'c', a);
    const d = await post(author, roomId, 'd', b);
    const e = await post(author, roomId, 'e', a);

    // Act
    const answer = await eventually('the whole thread indexed', async () => {
      const summary = await summarize(author, roomId, d);
      return summary.body.messageCount === 6 && summary;
    });

    // Assess
    expect(answer.body).toMatchObject({ rootMessageId: r, messageCount: 6, truncated: false });
    expect(idsIn(lastThreadPrompt())).toEqual([r, a, b, c, e, d]);
  });

  it('reads at most 40 messages: 40 exactly is whole, 41 is truncated at 40 in breadth-first order', async () => {
    // Arrange: a root with 13 replies, each with two replies of its own (40 messages), then one more
    const author = await user();
    const roomId = await room([author]);
    const root = await post(author, roomId, 'root of forty');
    const firstLevel: number[] = [];
    for (let index = 0; index < 13; index++) firstLevel.push(await post(author, roomId, `level one ${index}`, root));
    const secondLevel: number[] = [];
    for (const parent of firstLevel) {
      for (let index = 0; index < 2; index++) secondLevel.push(await post(author, roomId, `level two ${parent}.${index}`, parent));
    }

    // Act
    const forty = await eventually('40 indexed', async () => {
      const summary = await summarize(author, roomId, root);
      return summary.body.messageCount === 40 && summary;
    });
    const extra = await post(author, roomId, 'level two, the 41st', firstLevel[0]);
    const fortyOne = await eventually('41 indexed', async () => {
      const summary = await summarize(author, roomId, root);
      return summary.body.truncated === true && summary;
    });

    // Assess
    expect(forty.body).toMatchObject({ messageCount: 40, truncated: false });
    expect(fortyOne.body).toMatchObject({ messageCount: 40, truncated: true, rootMessageId: root });
    // Breadth-first: the root, the first level, then the second level grouped by parent; the 41st
    // (a child of the first parent) takes third place in the second level, pushing the last out.
    const expected = [root, ...firstLevel, secondLevel[0], secondLevel[1], extra, ...secondLevel.slice(2)].slice(0, 40);
    expect(idsIn(lastThreadPrompt())).toEqual(expected);
  });

  it('answers 404 message_not_found for a message of another room and 429 with Retry-After past 10 a minute', async () => {
    // Arrange
    const author = await user();
    const [roomId, otherRoom] = [await room([author]), await room([author])];
    const root = await post(author, roomId, 'busy thread');
    await post(author, roomId, 'one', root);
    await post(author, roomId, 'two', root);
    const elsewhere = await post(author, otherRoom, 'not in that room');
    await eventually('indexed', async () => (await summarize(author, roomId, root)).status === 200);

    // Act
    const wrongRoom = await summarize(author, roomId, elsewhere);
    const answers = [];
    for (let index = 0; index < 10; index++) answers.push(await summarize(author, roomId, root));

    // Assess
    expect(wrongRoom).toMatchObject({ status: 404, body: { error: { code: 'message_not_found' } } });
    const limited = answers.find((answer) => answer.status === 429);
    expect(limited?.body.error.code).toBe('rate_limited');
    expect(Number(limited?.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('bounds the prompt: 40 messages of 4,000 characters make a prompt of at most AI_PROMPT_MAX_CHARS', async () => {
    // Arrange
    const author = await user();
    const roomId = await room([author]);
    const root = await post(author, roomId, 'x'.repeat(4000));
    for (let index = 0; index < 39; index++) await post(author, roomId, `${index}`.padEnd(4000, 'y'), root);

    // Act
    await eventually('the thread indexed', async () => (await summarize(author, roomId, root)).body.messageCount === 40);

    // Assess: bounded, and what is cut is the end of the thread, never its root
    const prompt = ai.requests.at(-1)?.messages.at(-1)?.content ?? '';
    expect(prompt.length).toBeLessThanOrEqual(PROMPT_MAX_CHARS + 100);
    expect(prompt.length).toBeGreaterThan(PROMPT_MAX_CHARS / 2);
    expect(idsIn(lastThreadPrompt())[0]).toBe(root);
  });

  it('answers 409 e2e_room in an end-to-end encrypted room: its ciphertext never goes to a provider', async () => {
    // Arrange
    const author = await user();
    const roomId = unique('e2e');
    await call('/rooms', { apiKey, body: { id: roomId, type: 'group', members: [author.userId], e2eEnabled: true } });
    const root = await post(author, roomId, 'Y2lwaGVy');
    await post(author, roomId, 'dGV4dA==', root);
    await post(author, roomId, 'b25seQ==', root);
    const requestsBefore = ai.requests.length;

    // Act
    const summary = await summarize(author, roomId, root);
    const suggestions = await call('/messages/suggest-replies', { token: author.token, body: { roomId } });

    // Assess
    expect(summary).toMatchObject({ status: 409, body: { error: { code: 'e2e_room' } } });
    expect(suggestions).toMatchObject({ status: 409, body: { error: { code: 'e2e_room' } } });
    expect(ai.requests.length).toBe(requestsBefore);
  });

  it('turns provider failures into 502 with a code: errors, garbage and time-outs', async () => {
    // Arrange
    const author = await user();
    const roomId = await room([author]);
    const root = await post(author, roomId, 'failing thread');
    await post(author, roomId, 'one', root);
    await post(author, roomId, 'two', root);
    await eventually('indexed', async () => (await summarize(author, roomId, root)).status === 200);

    // Act
    ai.reply({ status: 500, times: 2 });
    const failed = await summarize(author, roomId, root);
    ai.reply({ status: 200, malformed: true, times: 2 });
    const garbage = await summarize(author, roomId, root);
    ai.reply({ delayMs: 1500, times: 2 });
    const slow = await summarize(author, roomId, root);
    ai.reset();

    // Assess
    expect(failed).toMatchObject({ status: 502, body: { error: { code: 'ai_provider_error' } } });
    expect(garbage).toMatchObject({ status: 502, body: { error: { code: 'ai_bad_response' } } });
    expect(slow).toMatchObject({ status: 502, body: { error: { code: 'ai_timeout' } } });
  });

  it('logs ai.provider_failed with the sanitized reason (HTTP 401, HTTP 500, time-out), never the key or the prompt', async () => {
    // Arrange
    const author = await user();
    const roomId = await room([author]);
    const secretWords = unique('prompt-words');
    const root = await post(author, roomId, `${secretWords} root`);
    await post(author, roomId, `${secretWords} one`, root);
    await post(author, roomId, `${secretWords} two`, root);
    await eventually('indexed', async () => (await summarize(author, roomId, root)).status === 200);
    const failureLines = () =>
      local
        .output()
        .split('\n')
        .filter((line) => line.includes('"ai.provider_failed"'))
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    const before = failureLines().length;

    // Act
    ai.reply({ status: 401, times: 1 });
    await summarize(author, roomId, root);
    ai.reply({ status: 500, times: 2 });
    await summarize(author, roomId, root);
    ai.reply({ delayMs: 1500, times: 2 });
    await summarize(author, roomId, root);
    ai.reset();

    // Assess
    const lines = await eventually('three failures logged', async () => {
      const logged = failureLines().slice(before);
      return logged.length >= 3 && logged;
    });
    expect(lines.map((line) => line.reason)).toEqual([
      'the AI provider answered HTTP 401 (invalid_api_key)',
      'the AI provider answered HTTP 500 (server_error) (2 attempts)',
      'the AI provider did not answer within 800 ms (2 attempts)',
    ]);
    expect(lines.map((line) => line.code)).toEqual(['ai_provider_error', 'ai_provider_error', 'ai_timeout']);
    const logged = JSON.stringify(lines);
    expect(logged).not.toContain(AI_KEY);
    expect(logged).not.toContain(secretWords);
  });
});

describe('reply suggestions', () => {
  it('answers up to 3 suggestions with the suggestion model, and 403 feature_disabled when the flag is off', async () => {
    // Arrange
    const author = await user();
    const roomId = await room([author]);
    const asked = await post(author, roomId, 'Lunch at noon?');
    ai.reply(() => '1. Sounds good\n2. "Can we do 12:30?"\n3. I already ate\n4. a fourth one');

    // Act
    const answer = await call('/messages/suggest-replies', { token: author.token, body: { roomId, messageId: asked } });
    const model = ai.requests.at(-1)?.model;
    ai.reset();
    await call('/admin/feature-flags', { method: 'PUT', apiKey, body: { overrides: { reply_suggestions: false } } });
    const disabled = await call('/messages/suggest-replies', { token: author.token, body: { roomId } });
    await call('/admin/feature-flags', { method: 'PUT', apiKey, body: { overrides: { reply_suggestions: true } } });

    // Assess
    expect(answer).toMatchObject({ status: 200, body: { suggestions: ['Sounds good', 'Can we do 12:30?', 'I already ate'] } });
    expect(model).toBe(MODELS.suggest);
    expect(disabled).toMatchObject({ status: 403, body: { error: { code: 'feature_disabled' } } });
  });
});

describe('reply suggestions per user', () => {
  it('answers 429 with Retry-After past 10 a minute (RATE_LIMIT_REPLY_SUGGESTIONS_PER_MINUTE) without asking the provider', async () => {
    // Arrange
    const [author, other] = [await user(), await user()];
    const roomId = await room([author, other]);
    await post(author, roomId, 'Coffee?');
    const insideMinute = 60_000 - (Date.now() % 60_000);
    if (insideMinute < 10_000) await new Promise((resolve) => setTimeout(resolve, insideMinute + 50));
    ai.reset();

    // Act
    const answers = [];
    for (let index = 0; index < 11; index++)
      answers.push(await call('/messages/suggest-replies', { token: author.token, body: { roomId } }));
    const byOther = await call('/messages/suggest-replies', { token: other.token, body: { roomId } });

    // Assess
    expect(answers.slice(0, 10).map((answer) => answer.status)).toEqual(Array(10).fill(200));
    expect(answers[10]).toMatchObject({ status: 429, body: { error: { code: 'rate_limited' } } });
    expect(Number(answers[10]?.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(byOther.status).toBe(200);
    expect(ai.requests).toHaveLength(11);
  });
});

describe('quota', () => {
  it('counts every AI call and answers 402 quota_exceeded at the boundary', async () => {
    // Arrange: a project of its own with a quota of 2
    const created = await call('/platform/projects', { body: { name: 'quota' }, headers: { 'x-service-operator-key': OPERATOR_KEY } });
    const { projectId, apiKey: quotaKey } = created.body as { projectId: string; apiKey: string };
    const set = await call(`/platform/projects/${projectId}/ai-quota`, {
      method: 'PUT',
      body: { monthlyInvocations: 2 },
      headers: { 'x-service-operator-key': OPERATOR_KEY },
    });
    const author = await user('quota', quotaKey);
    const roomId = await room([author], quotaKey);
    await post(author, roomId, 'anything to suggest on?');

    // Act
    const first = await call('/messages/suggest-replies', { token: author.token, body: { roomId } });
    const second = await call('/messages/suggest-replies', { token: author.token, body: { roomId } });
    const third = await call('/messages/suggest-replies', { token: author.token, body: { roomId } });
    const usage = await call('/admin/ai/usage', { apiKey: quotaKey });

    // Assess
    expect(set).toMatchObject({ status: 200, body: { quota: 2, used: 0 } });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(third).toMatchObject({ status: 402, body: { error: { code: 'quota_exceeded' } } });
    expect(usage.body).toMatchObject({ used: 2, quota: 2, remaining: 0, month: new Date().toISOString().slice(0, 7) });
  });
});

describe('room summaries', () => {
  let receiver: WebhookReceiver;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
    const registered = await call('/webhooks/register', { apiKey, body: { url: receiver.url, eventTypes: ['room.summary'] } });
    receiver.secret = registered.body.secret;
  });
  afterAll(async () => {
    await receiver?.close();
  });

  it('queues one job for a burst of 1,000, persists the summary, fires room.summary, and waits for both thresholds before the next', async () => {
    // Arrange
    const author = await user();
    const roomId = await room([author]);
    const roomSummaryCalls = () => ai.requests.filter((request) => request.messages[0]?.content.startsWith(ROOM_SUMMARY_SYSTEM)).length;
    const before = roomSummaryCalls();

    // Act: a burst of 1,000 messages (the threshold is 20)
    const burstStarted = Date.now();
    for (let start = 0; start < 1000; start += 25) {
      await Promise.all(Array.from({ length: 25 }, (_, index) => post(author, roomId, `burst message ${start + index}`)));
    }
    const burstSeconds = (Date.now() - burstStarted) / 1000;
    const [delivered] = await receiver.waitForRequests(1, 20_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const listed = await call(`/rooms/${roomId}/summaries`, { token: author.token });

    // Assess: the whole burst fell within one interval, so exactly one job ran
    expect(burstSeconds).toBeLessThan(SUMMARY_INTERVAL_SECONDS);
    expect(roomSummaryCalls() - before).toBe(1);
    expect(listed.status).toBe(200);
    expect(listed.body.summaries).toHaveLength(1);
    const [summary] = listed.body.summaries;
    expect(summary).toMatchObject({ roomId, summary: expect.stringMatching(/^- /), messageCount: expect.any(Number) });
    const envelope = JSON.parse(delivered?.rawBody ?? '{}');
    expect(envelope).toMatchObject({ type: 'room.summary', projectId: 'demo', payload: { roomId, summaryId: summary.summaryId } });
    expect(receiverAcceptsSignature(receiver.secret as string, delivered?.rawBody ?? '', delivered?.headers['x-service-signature'])).toBe(
      true,
    );

    // Act: a quiet room below the threshold, then at it
    const quiet = await room([author]);
    for (let index = 0; index < 19; index++) await post(author, quiet, `quiet ${index}`);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const belowThreshold = (await call(`/rooms/${quiet}/summaries`, { token: author.token })).body.summaries.length;
    await post(author, quiet, 'the twentieth');

    // Assess
    expect(belowThreshold).toBe(0);
    await eventually('the quiet room summarized', async () => {
      const summaries = await call(`/rooms/${quiet}/summaries`, { token: author.token });
      return summaries.body.summaries.length === 1;
    });

    // Act: the busy room's backlog waits for the interval, then one message brings its next summary
    await new Promise((resolve) =>
      setTimeout(resolve, Math.max(0, Date.parse(summary.createdAt) + (SUMMARY_INTERVAL_SECONDS + 1) * 1000 - Date.now())),
    );
    await post(author, roomId, 'after the interval');

    // Assess
    await eventually('a second summary of the busy room', async () => {
      const again = await call(`/rooms/${roomId}/summaries`, { token: author.token });
      return again.body.summaries.length === 2;
    });
  }, 150_000);
});

describe('without AI_BASE_URL', () => {
  it('answers 503 ai_not_configured on every AI route, keeps the agent routes, and stores a mention without answering', async () => {
    // Arrange
    const plain = await plainStarting;
    try {
      const plainCall = clientOf(plain.baseUrl);
      const token = (await plainCall('/auth/token', { apiKey: plain.apiKey, body: { userId: 'alice' } })).body.token as string;
      await plainCall('/rooms', { token, body: { id: 'no-ai', type: 'group' } });
      const messageId = (await plainCall('/messages', { token, body: { roomId: 'no-ai', content: 'hello' } })).body.id as number;
      const created = await plainCall('/agents', {
        apiKey: plain.apiKey,
        body: { handle: 'helper', name: 'Helper', instructions: 'Help.' },
      });

      // Act
      const summary = await plainCall(`/messages/${messageId}/summary`, { token, body: { roomId: 'no-ai' } });
      const suggestions = await plainCall('/messages/suggest-replies', { token, body: { roomId: 'no-ai' } });
      const invoked = await plainCall(`/agents/${created.body.id}/invoke`, { token, body: { roomId: 'no-ai' } });
      const mentioned = await plainCall('/messages', { token, body: { roomId: 'no-ai', content: '@agent:helper hi' } });

      // Assess
      expect(summary).toMatchObject({ status: 503, body: { error: { code: 'ai_not_configured' } } });
      // A setting is the cause, so the answer says which, rather than hiding behind a trace id.
      expect(summary.body.error.message).toContain('set AI_BASE_URL');
      expect(suggestions).toMatchObject({ status: 503, body: { error: { code: 'ai_not_configured' } } });
      expect(created.status).toBe(201);
      expect(invoked).toMatchObject({ status: 503, body: { error: { code: 'ai_not_configured' } } });
      expect(mentioned.status).toBe(201);
    } finally {
      await plain.stop();
    }
  });
});
