import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defaultContent, type OpenAiServer, type RecordedChatRequest, startOpenAiServer } from '../support/ai/openai-server';
import { clientOf } from '../support/api';
import { type LocalProcess, startLocalProcess } from '../support/local-process';
import { eventually } from '../support/webhook-receiver';
import { connect, type Frame, type RoomSocket } from '../support/ws';

/**
 * In-room AI agents end to end, on a runtime of its own whose `AI_BASE_URL` is a local
 * OpenAI-compatible server (real HTTP, the real request and answer shapes) recording every prompt:
 * the admin routes, `POST /agents/{agentId}/invoke` and `@agent:<handle>` mentions answering in the
 * room over real WebSockets (`agentTyping` first), both blocked during a handoff, and the
 * failures (no AI, a failing provider).
 */

const OPERATOR_KEY = 'agents-operator-key-0123456789abc';
const MAIN_MODEL = 'main-model';
const PROMPT_MAX_CHARS = 6000;
const AGENTS_PER_MESSAGE = 2;
const ANSWERS_PER_MINUTE = 3;

let local: LocalProcess;
let call: ReturnType<typeof clientOf>;
let ai: OpenAiServer;
let apiKey: string;
let wsUrl: string;
const sockets: RoomSocket[] = [];

/** Agents' instructions carry a tag; the server answers a request whose system prompt names one with `answer <tag>`. */
const tagOf = (request: RecordedChatRequest) => /\[\[(tag-[0-9a-f]+)\]\]/.exec(request.messages[0]?.content ?? '')?.[1];
const answerFor = (tag: string) => `answer ${tag}`;

beforeAll(async () => {
  ai = await startOpenAiServer();
  local = await startLocalProcess({
    args: ['--in-memory'],
    env: {
      CHAT_OPERATOR_KEY: OPERATOR_KEY,
      RATE_LIMIT_MESSAGES_PER_MINUTE: '1000',
      AI_BASE_URL: ai.url,
      AI_MODEL: MAIN_MODEL,
      AI_ALLOWED_MODELS: `${MAIN_MODEL},support-model,agent-model`,
      AI_MAX_AGENTS_PER_MESSAGE: String(AGENTS_PER_MESSAGE),
      RATE_LIMIT_AGENT_INVOKE_PER_MINUTE: String(ANSWERS_PER_MINUTE),
      AI_TIMEOUT_MS: '5000',
      AI_ATTEMPTS: '2',
      AI_PROMPT_MAX_CHARS: String(PROMPT_MAX_CHARS),
    },
  });
  call = clientOf(local.baseUrl);
  apiKey = local.apiKey;
  wsUrl = local.baseUrl.replace(/^http/, 'ws');
}, 90_000);

beforeEach(() => {
  ai.reset();
  ai.reply((request) => {
    const tag = tagOf(request);
    return tag ? answerFor(tag) : defaultContent(request.messages);
  });
});

afterAll(async () => {
  await Promise.all(sockets.map((socket) => socket.close()));
  await local?.stop();
  await ai?.close();
});

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface User {
  readonly userId: string;
  readonly token: string;
}
async function user(prefix = 'user', roles?: string[], key = apiKey): Promise<User> {
  const userId = unique(prefix);
  const issued = await call('/auth/token', { apiKey: key, body: { userId, ...(roles ? { roles } : {}) } });
  expect(issued.status).toBe(201);
  return { userId, token: issued.body.token as string };
}

async function room(members: readonly User[], type: 'group' | 'public' = 'group') {
  const roomId = unique('room');
  const created = await call('/rooms', { apiKey, body: { id: roomId, type, members: members.map((member) => member.userId) } });
  expect(created.status).toBe(201);
  return roomId;
}

async function post(author: User, roomId: string, content: string) {
  const sent = await call('/messages', { token: author.token, body: { roomId, content } });
  expect(sent.status, JSON.stringify(sent.body)).toBe(201);
  return sent.body as { id: number; userId: string; content: string };
}

interface AgentView {
  readonly id: string;
  readonly handle: string;
  readonly userId: string;
  readonly tag: string;
}
/** A fresh agent of the demo project whose instructions carry a tag the AI server answers with. */
async function agent(options: { model?: string } = {}): Promise<AgentView> {
  const tag = `tag-${randomBytes(4).toString('hex')}`;
  const handle = unique('helper');
  const created = await call('/agents', {
    apiKey,
    body: { handle, name: `Helper ${tag}`, instructions: `You help with release questions. [[${tag}]]`, ...options },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { id: created.body.id, handle, userId: `agent:${handle}`, tag };
}

async function messagesOf(roomId: string) {
  const listed = await call(`/rooms/${roomId}/messages?limit=100`, { apiKey });
  expect(listed.status).toBe(200);
  return listed.body.messages as { id: number; userId: string; content: string }[];
}

async function watch(roomId: string, viewer: User) {
  const socket = await connect(roomId, viewer.token, { wsUrl });
  sockets.push(socket);
  await socket.next((frame) => frame.type === 'history' || frame.type === 'subscription_succeeded');
  return socket;
}

const agentRequests = (tag: string) => ai.requests.filter((request) => tagOf(request) === tag);
const isTyping = (agentId: string, typing: boolean) => (frame: Frame) =>
  frame.type === 'agentTyping' && frame.agentId === agentId && frame.typing === typing;
const isAgentMessage = (userId: string) => (frame: Frame) => frame.type === 'message' && frame.message?.userId === userId;

describe('agent routes', () => {
  it('creates, lists, updates and deletes an agent', async () => {
    // Arrange
    const handle = unique('support');
    const member = await user('member');

    // Act
    const created = await call('/agents', {
      apiKey,
      body: { handle, name: 'Support', instructions: 'Answer support questions briefly.', model: 'support-model' },
    });
    const id = created.body.id as string;
    const listed = await call('/agents', { token: member.token });
    const renamed = await call(`/agents/${id}`, { method: 'PATCH', apiKey, body: { name: 'Support desk', instructions: 'Be brief.' } });
    const cleared = await call(`/agents/${id}`, { method: 'PATCH', apiKey, body: { model: null } });
    const deleted = await call(`/agents/${id}`, { method: 'DELETE', apiKey });
    const listedAfter = await call('/agents', { apiKey });
    const patchedAfter = await call(`/agents/${id}`, { method: 'PATCH', apiKey, body: { name: 'x' } });
    const deletedAgain = await call(`/agents/${id}`, { method: 'DELETE', apiKey });
    const recreated = await call('/agents', { apiKey, body: { handle, name: 'Support again', instructions: 'Hello.' } });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.stringMatching(/^agt_[A-Za-z0-9]+$/),
      handle,
      userId: `agent:${handle}`,
      name: 'Support',
      instructions: 'Answer support questions briefly.',
      model: 'support-model',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      createdBy: 'service',
    });
    expect(listed.status).toBe(200);
    // A member's list leaves out the instructions (the system prompt), which only admins see.
    const { instructions: _instructions, ...memberView } = created.body;
    expect(listed.body.agents).toContainEqual(memberView);
    expect(renamed).toMatchObject({
      status: 200,
      body: { id, handle, name: 'Support desk', instructions: 'Be brief.', model: 'support-model' },
    });
    expect(cleared).toMatchObject({ status: 200, body: { id, name: 'Support desk', model: null } });
    expect(deleted.status).toBe(204);
    expect(listedAfter.body.agents.map((listedAgent: { id: string }) => listedAgent.id)).not.toContain(id);
    expect(patchedAfter).toMatchObject({ status: 404, body: { error: { code: 'agent_not_found' } } });
    expect(deletedAgain).toMatchObject({ status: 404, body: { error: { code: 'agent_not_found' } } });
    expect(recreated.status).toBe(201);
    expect(recreated.body.id).not.toBe(id);
  });

  it("shows an agent's instructions (its system prompt) to admins and the API key only", async () => {
    // Arrange
    const created = await agent();
    const member = await user('reader');
    const admin = await user('admin', ['admin']);

    // Act
    const byMember = await call('/agents', { token: member.token });
    const byAdmin = await call('/agents', { token: admin.token });
    const byKey = await call('/agents', { apiKey });

    // Assess
    const find = (answer: { body: { agents: Record<string, unknown>[] } }) => answer.body.agents.find((listed) => listed.id === created.id);
    expect(find(byMember)).toMatchObject({ id: created.id, handle: created.handle });
    expect(find(byMember)).not.toHaveProperty('instructions');
    const instructions = `You help with release questions. [[${created.tag}]]`;
    expect(find(byAdmin)).toHaveProperty('instructions', instructions);
    expect(find(byKey)).toHaveProperty('instructions', instructions);
  });

  it('keeps a handle unique per project, not across projects', async () => {
    // Arrange
    const handle = unique('dup');
    const other = await call('/platform/projects', { body: { name: 'agents-other' }, headers: { 'x-service-operator-key': OPERATOR_KEY } });
    const otherKey = other.body.apiKey as string;
    const body = { handle, name: 'One', instructions: 'Hi.' };

    // Act
    const first = await call('/agents', { apiKey, body });
    const second = await call('/agents', { apiKey, body: { ...body, name: 'Two' } });
    const elsewhere = await call('/agents', { apiKey: otherKey, body });
    const foreignId = elsewhere.body.id as string;
    const foreignPatch = await call(`/agents/${foreignId}`, { method: 'PATCH', apiKey, body: { name: 'mine now' } });
    const foreignDelete = await call(`/agents/${foreignId}`, { method: 'DELETE', apiKey });
    const listed = await call('/agents', { apiKey });
    const stillThere = await call('/agents', { apiKey: otherKey });

    // Assess
    expect(first.status).toBe(201);
    expect(second).toMatchObject({ status: 409, body: { error: { code: 'agent_handle_taken' } } });
    expect(elsewhere.status).toBe(201);
    expect(foreignPatch).toMatchObject({ status: 404, body: { error: { code: 'agent_not_found' } } });
    expect(foreignDelete).toMatchObject({ status: 404, body: { error: { code: 'agent_not_found' } } });
    expect(listed.body.agents.filter((listedAgent: { handle: string }) => listedAgent.handle === handle)).toHaveLength(1);
    expect(stillThere.body.agents).toEqual([expect.objectContaining({ id: foreignId, name: 'One' })]);
  });

  it('leaves creating, changing and deleting agents to admins', async () => {
    // Arrange
    const member = await user('member');
    const moderator = await user('moderator', ['moderator']);
    const admin = await user('admin', ['admin']);
    const target = await agent();

    // Act
    const byMember = await call('/agents', { token: member.token, body: { handle: unique('m'), name: 'M', instructions: 'x' } });
    const byModerator = await call('/agents', { token: moderator.token, body: { handle: unique('m'), name: 'M', instructions: 'x' } });
    const patchByMember = await call(`/agents/${target.id}`, { method: 'PATCH', token: member.token, body: { name: 'M' } });
    const deleteByMember = await call(`/agents/${target.id}`, { method: 'DELETE', token: member.token });
    const byAdmin = await call('/agents', { token: admin.token, body: { handle: unique('a'), name: 'A', instructions: 'x' } });
    const patchByAdmin = await call(`/agents/${target.id}`, { method: 'PATCH', token: admin.token, body: { name: 'A' } });

    // Assess
    for (const refused of [byMember, byModerator, patchByMember, deleteByMember]) {
      expect(refused).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    }
    expect(byAdmin).toMatchObject({ status: 201, body: { createdBy: admin.userId } });
    expect(patchByAdmin).toMatchObject({ status: 200, body: { name: 'A' } });
  });

  describe.each([
    ['a handle with capitals', { handle: 'Support' }],
    ['a one-letter handle', { handle: 's' }],
    ['a handle starting with a digit', { handle: '1support' }],
    ['a handle with a colon', { handle: 'sup:port' }],
    ['a 33-character handle', { handle: `s${'a'.repeat(32)}` }],
    ['an empty name', { name: '  ' }],
    ['an 81-character name', { name: 'n'.repeat(81) }],
    ['4001 characters of instructions', { instructions: 'i'.repeat(4001) }],
    ['a 201-character model', { model: 'm'.repeat(201) }],
    ['an unknown field', { temperature: 0.5 }],
  ])('POST /agents with %s', (_case, change) => {
    it('is a 400 validation_failed', async () => {
      // Arrange
      const body = { handle: unique('valid'), name: 'Valid', instructions: 'Valid.', ...change };

      // Act
      const refused = await call('/agents', { apiKey, body });

      // Assess
      expect(refused).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    });
  });

  it('refuses a model outside AI_ALLOWED_MODELS with 400 model_not_allowed, on create and on change, and stores neither', async () => {
    // Arrange
    const target = await agent({ model: 'support-model' });
    const handle = unique('pricey');

    // Act
    const created = await call('/agents', { apiKey, body: { handle, name: 'Pricey', instructions: 'Think hard.', model: 'o1-pro' } });
    const changed = await call(`/agents/${target.id}`, { method: 'PATCH', apiKey, body: { model: 'gpt-4.5-preview' } });
    const listed = await call('/agents', { apiKey });

    // Assess
    for (const refused of [created, changed]) {
      expect(refused).toMatchObject({
        status: 400,
        body: { error: { code: 'model_not_allowed', details: { allowedModels: [MAIN_MODEL, 'support-model', 'agent-model'] } } },
      });
    }
    const agents = listed.body.agents as { id: string; handle: string; model: string | null }[];
    expect(agents.map((listedAgent) => listedAgent.handle)).not.toContain(handle);
    expect(agents.find((listedAgent) => listedAgent.id === target.id)?.model).toBe('support-model');
  });

  it('validates changes and invocations, and answers 404 agent_not_found for an unknown id', async () => {
    // Arrange
    const target = await agent();
    const caller = await user('caller');
    const roomId = await room([caller]);

    // Act
    const emptyPatch = await call(`/agents/${target.id}`, { method: 'PATCH', apiKey, body: {} });
    const handlePatch = await call(`/agents/${target.id}`, { method: 'PATCH', apiKey, body: { handle: 'renamed' } });
    const longPrompt = await call(`/agents/${target.id}/invoke`, { token: caller.token, body: { roomId, prompt: 'p'.repeat(4001) } });
    const noRoom = await call(`/agents/${target.id}/invoke`, { token: caller.token, body: {} });
    const unknownPatch = await call('/agents/agt_unknown', { method: 'PATCH', apiKey, body: { name: 'x' } });
    const unknownDelete = await call('/agents/agt_unknown', { method: 'DELETE', apiKey });
    const unknownInvoke = await call('/agents/agt_unknown/invoke', { token: caller.token, body: { roomId } });

    // Assess
    for (const refused of [emptyPatch, handlePatch, longPrompt, noRoom]) {
      expect(refused).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    }
    for (const missing of [unknownPatch, unknownDelete, unknownInvoke]) {
      expect(missing).toMatchObject({ status: 404, body: { error: { code: 'agent_not_found' } } });
    }
    expect(ai.requests).toHaveLength(0);
  });
});

describe('POST /agents without a handle', () => {
  const HANDLE_PATTERN = /^[a-z][a-z0-9-]{1,31}$/;
  const create = (body: Record<string, unknown>) => call('/agents', { apiKey, body: { instructions: 'Answer briefly.', ...body } });

  it('derives the handle from the name, and @mentions of it make the agent answer', async () => {
    // Arrange
    const suffix = randomBytes(4).toString('hex');
    const tag = `tag-${suffix}`;
    const author = await user('author');
    const roomId = await room([author]);

    // Act
    const created = await call('/agents', {
      apiKey,
      body: { name: `Release Bot ${suffix}`, instructions: `You help with releases. [[${tag}]]`, model: 'agent-model' },
    });
    await post(author, roomId, `@agent:release-bot-${suffix} is the release out?`);
    const answer = await eventually('the answer', async () =>
      (await messagesOf(roomId)).find((message) => message.userId === `agent:release-bot-${suffix}`),
    );

    // Assess
    expect(created).toMatchObject({
      status: 201,
      body: { handle: `release-bot-${suffix}`, userId: `agent:release-bot-${suffix}`, name: `Release Bot ${suffix}` },
    });
    expect(answer.content).toBe(answerFor(tag));
  }, 30_000);

  it('gives agents of the same name distinct handles, created one after another or at once', async () => {
    // Arrange
    const suffix = randomBytes(4).toString('hex');
    const name = `Triage ${suffix}`;
    const base = `triage-${suffix}`;

    // Act
    const first = await create({ name });
    const second = await create({ name });
    const atOnce = await Promise.all([create({ name }), create({ name }), create({ name }), create({ name })]);
    const listed = await call('/agents', { apiKey });

    // Assess
    expect(first).toMatchObject({ status: 201, body: { handle: base } });
    expect(second).toMatchObject({ status: 201, body: { handle: `${base}-2` } });
    expect(atOnce.map((created) => created.status)).toEqual([201, 201, 201, 201]);
    expect(atOnce.map((created) => created.body.handle as string).sort()).toEqual([3, 4, 5, 6].map((n) => `${base}-${n}`).sort());
    const handles = (listed.body.agents as { handle: string; name: string }[]).filter((listedAgent) => listedAgent.name === name);
    expect(handles.map((listedAgent) => listedAgent.handle).sort()).toEqual([base, ...[2, 3, 4, 5, 6].map((n) => `${base}-${n}`)].sort());
  });

  it.each([
    ['emoji only', '🤖✨', /^agent(-\d+)?$/],
    ['a script outside a-z', '助手', /^agent(-\d+)?$/],
    ['accents and a leading digit', '42 Zoë Ünïcode', /^agent-42-zoe-unicode(-\d+)?$/],
    ['one letter', 'Q', /^agent-q(-\d+)?$/],
    ['80 characters', `${'Very long name '.repeat(6)}ending here`.slice(0, 80), /^very-long-name-very-long-name-(ve|\d+)$/],
  ])('makes a valid handle of a name with %s', async (_case, name, expected) => {
    // Act
    const first = await create({ name });
    const second = await create({ name });

    // Assess
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    for (const created of [first, second]) {
      expect(created.body.handle).toMatch(HANDLE_PATTERN);
      expect(created.body.handle).toMatch(expected);
      expect(created.body.name).toBe(name.trim());
    }
    expect(second.body.handle).not.toBe(first.body.handle);
  });

  it('stops at -99: once every handle derived from a name is taken, it answers 409 agent_handle_taken', async () => {
    // Arrange: base, base-2 ... base-99
    const suffix = randomBytes(4).toString('hex');
    const name = `Crowd ${suffix}`;
    const handles: string[] = [];
    for (let n = 1; n <= 99; n++) {
      const created = await create({ name });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      handles.push(created.body.handle);
    }

    // Act
    const refused = await create({ name });
    const explicit = await create({ name, handle: `crowd-${suffix}-x` });

    // Assess
    expect(new Set(handles).size).toBe(99);
    expect(handles.at(-1)).toBe(`crowd-${suffix}-99`);
    expect(refused).toMatchObject({ status: 409, body: { error: { code: 'agent_handle_taken' } } });
    expect(explicit).toMatchObject({ status: 201, body: { handle: `crowd-${suffix}-x` } });
  }, 60_000);

  it('keeps an explicit handle, and a taken one still answers 409 agent_handle_taken', async () => {
    // Arrange
    const suffix = randomBytes(4).toString('hex');
    const explicit = unique('chosen');
    const derived = await create({ name: `Desk ${suffix}` });

    // Act
    const chosen = await create({ name: `Desk ${suffix}`, handle: explicit });
    const takenExplicit = await create({ name: 'Other', handle: explicit });
    const takenDerived = await create({ name: 'Other', handle: `desk-${suffix}` });

    // Assess
    expect(derived).toMatchObject({ status: 201, body: { handle: `desk-${suffix}` } });
    expect(chosen).toMatchObject({ status: 201, body: { handle: explicit, userId: `agent:${explicit}` } });
    for (const refused of [takenExplicit, takenDerived]) {
      expect(refused).toMatchObject({ status: 409, body: { error: { code: 'agent_handle_taken' } } });
    }
  });
});

describe('POST /agents/{agentId}/invoke', () => {
  it('answers in the room as the agent, after agentTyping frames, from its instructions and the recent messages', async () => {
    // Arrange
    const target = await agent({ model: 'agent-model' });
    const [alice, bob] = [await user('alice'), await user('bob')];
    const roomId = await room([alice, bob]);
    await post(alice, roomId, 'When is the release?');
    await post(bob, roomId, 'I think Friday, not sure.');
    const socket = await watch(roomId, bob);

    // Act
    const invoked = await call(`/agents/${target.id}/invoke`, { token: alice.token, body: { roomId, prompt: 'Please confirm the date.' } });
    await socket.next(isTyping(target.id, false));

    // Assess: the answer
    expect(invoked.status, JSON.stringify(invoked.body)).toBe(201);
    expect(invoked.body.message).toMatchObject({ roomId, userId: target.userId, content: answerFor(target.tag) });
    const stored = await messagesOf(roomId);
    expect(stored.at(-1)).toMatchObject({ id: invoked.body.message.id, userId: target.userId, content: answerFor(target.tag) });
    const members = await call(`/rooms/${roomId}/members`, { apiKey });
    expect(JSON.stringify(members.body)).toContain(target.userId);
    // Assess: the frames, typing first
    const frames = socket.frames.filter((frame) => frame.type === 'agentTyping' || frame.type === 'message');
    const typingOn = frames.findIndex(isTyping(target.id, true));
    const message = frames.findIndex(isAgentMessage(target.userId));
    const typingOff = frames.findIndex(isTyping(target.id, false));
    expect(frames[typingOn]).toEqual({ type: 'agentTyping', roomId, agentId: target.id, userId: target.userId, typing: true });
    expect(typingOn).toBeGreaterThanOrEqual(0);
    expect(message).toBeGreaterThan(typingOn);
    expect(typingOff).toBeGreaterThan(message);
    expect(frames[message]?.message).toMatchObject({ id: invoked.body.message.id, content: answerFor(target.tag) });
    // Assess: the prompt
    const [request] = agentRequests(target.tag);
    expect(agentRequests(target.tag)).toHaveLength(1);
    expect(request?.model).toBe('agent-model');
    expect(request?.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('You help with release questions.') });
    const userPrompt = request?.messages[1]?.content ?? '';
    expect(userPrompt).toContain(`${alice.userId}: When is the release?`);
    expect(userPrompt).toContain(`${bob.userId}: I think Friday, not sure.`);
    expect(userPrompt).toContain('Please confirm the date.');
  });

  it('uses AI_MODEL for an agent without a model and keeps its prompt bounded however long the room is', async () => {
    // Arrange: 25 messages of 1,500 characters
    const target = await agent();
    const author = await user('author');
    const roomId = await room([author]);
    for (let index = 1; index <= 25; index++) await post(author, roomId, `message-${String(index).padStart(2, '0')} ${'x'.repeat(1500)}`);

    // Act
    const invoked = await call(`/agents/${target.id}/invoke`, { token: author.token, body: { roomId } });

    // Assess
    expect(invoked.status).toBe(201);
    const [request] = agentRequests(target.tag);
    expect(request?.model).toBe(MAIN_MODEL);
    const userPrompt = request?.messages[1]?.content ?? '';
    expect(userPrompt.length).toBeLessThan(PROMPT_MAX_CHARS + 500);
    expect(userPrompt).toContain('message-25');
    // Only the 20 latest messages are read, and the oldest of those fall off the character bound.
    expect(userPrompt).not.toContain('message-05');
  });

  it('renews agentTyping every 3 s while the model works', async () => {
    // Arrange
    const target = await agent();
    const author = await user('author');
    const roomId = await room([author]);
    await post(author, roomId, 'Anyone?');
    const socket = await watch(roomId, author);
    ai.queue({ delayMs: 3600 });

    // Act
    const invoked = await call(`/agents/${target.id}/invoke`, { token: author.token, body: { roomId } });
    await socket.next(isTyping(target.id, false));

    // Assess
    expect(invoked.status).toBe(201);
    const frames = socket.frames.filter((frame) => frame.type === 'agentTyping' || frame.type === 'message');
    const message = frames.findIndex(isAgentMessage(target.userId));
    expect(frames.slice(0, message).filter(isTyping(target.id, true)).length).toBeGreaterThanOrEqual(2);
    expect(frames.slice(message).filter(isTyping(target.id, true))).toEqual([]);
  }, 20_000);

  it('answers 502 when the provider fails, still switching agentTyping off, and posts nothing', async () => {
    // Arrange
    const target = await agent();
    const author = await user('author');
    const roomId = await room([author]);
    await post(author, roomId, 'Hello?');
    const socket = await watch(roomId, author);
    ai.queue({ status: 500, times: 2 });

    // Act
    const invoked = await call(`/agents/${target.id}/invoke`, { token: author.token, body: { roomId } });
    await socket.next(isTyping(target.id, false));

    // Assess
    expect(invoked).toMatchObject({ status: 502, body: { error: { code: 'ai_provider_error' } } });
    expect(socket.frames.filter(isTyping(target.id, true)).length).toBeGreaterThanOrEqual(1);
    expect((await messagesOf(roomId)).filter((message) => message.userId === target.userId)).toEqual([]);
  });

  it('does not add an agent to a dm of two people', async () => {
    // Arrange
    const target = await agent();
    const [alice, bob] = [await user('alice'), await user('bob')];
    const dm = await call('/rooms', { token: alice.token, body: { type: 'dm', members: [bob.userId] } });

    // Act
    const invoked = await call(`/agents/${target.id}/invoke`, { token: alice.token, body: { roomId: dm.body.id } });
    const members = await call(`/rooms/${dm.body.id}/members`, { token: alice.token });

    // Assess
    expect(invoked).toMatchObject({ status: 409, body: { error: { code: 'dm_membership_fixed' } } });
    expect(JSON.stringify(members.body)).not.toContain(target.userId);
    expect(agentRequests(target.tag)).toEqual([]);
  });

  it('needs a caller who may post in the room', async () => {
    // Arrange
    const target = await agent();
    const [insider, outsider] = [await user('insider'), await user('outsider')];
    const roomId = await room([insider]);

    // Act
    const refused = await call(`/agents/${target.id}/invoke`, { token: outsider.token, body: { roomId } });
    const missing = await call(`/agents/${target.id}/invoke`, { token: insider.token, body: { roomId: unique('no-room') } });
    const withApiKey = await call(`/agents/${target.id}/invoke`, { apiKey, body: { roomId } });

    // Assess
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'not_a_member' } } });
    expect(missing).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
    expect(withApiKey.status).toBe(401);
    expect(agentRequests(target.tag)).toEqual([]);
  });
});

describe('@agent mentions', () => {
  it('make the agent answer in the room off the sender’s path, and an agent never wakes an agent', async () => {
    // Arrange: the agent's answer mentions itself, which must not start another answer
    const target = await agent();
    ai.reply((request) => (tagOf(request) === target.tag ? `${answerFor(target.tag)} (ask @${target.userId} again)` : 'other'));
    const [alice, bob] = [await user('alice'), await user('bob')];
    const roomId = await room([alice, bob]);
    await post(bob, roomId, 'The build is red.');
    const socket = await watch(roomId, bob);
    ai.queue({ delayMs: 1500 });

    // Act
    const started = Date.now();
    const mention = await post(alice, roomId, `@${target.userId} why is the build red?`);
    const senderWaitedMs = Date.now() - started;
    const storedRightAway = await messagesOf(roomId);
    const answered = await socket.next(isAgentMessage(target.userId), 15_000);
    await socket.next(isTyping(target.id, false));
    await sleep(1500);

    // Assess
    expect(senderWaitedMs).toBeLessThan(1500);
    expect(storedRightAway.filter((message) => message.userId === target.userId)).toEqual([]);
    expect(answered.message).toMatchObject({ roomId, userId: target.userId, content: expect.stringContaining(answerFor(target.tag)) });
    const frames = socket.frames.filter((frame) => frame.type === 'agentTyping' || frame.type === 'message');
    expect(frames.findIndex(isTyping(target.id, true))).toBeLessThan(frames.findIndex(isAgentMessage(target.userId)));
    expect(agentRequests(target.tag)).toHaveLength(1);
    const userPrompt = agentRequests(target.tag)[0]?.messages[1]?.content ?? '';
    expect(userPrompt).toContain(`[${mention.id}] ${alice.userId}: @${target.userId} why is the build red?`);
    expect(userPrompt).toContain('The build is red.');
    expect((await messagesOf(roomId)).filter((message) => message.userId === target.userId)).toHaveLength(1);
  }, 30_000);

  it('make each agent a message mentions answer, up to AI_MAX_AGENTS_PER_MESSAGE (2) in the order named', async () => {
    // Arrange
    const [first, second, third] = [await agent(), await agent(), await agent()];
    const author = await user('author');
    const roomId = await room([author]);

    // Act
    await post(author, roomId, `@${first.userId} and @${second.userId} (or @${third.userId}): which of you knows?`);
    const answers = await eventually('both answers', async () => {
      const stored = (await messagesOf(roomId)).filter((message) => message.userId.startsWith('agent:'));
      return stored.length === AGENTS_PER_MESSAGE && stored;
    });
    await sleep(1000);

    // Assess
    expect(answers.map((message) => [message.userId, message.content]).sort()).toEqual(
      [
        [first.userId, answerFor(first.tag)],
        [second.userId, answerFor(second.tag)],
      ].sort(),
    );
    expect(agentRequests(third.tag)).toEqual([]);
    expect((await messagesOf(roomId)).filter((message) => message.userId.startsWith('agent:'))).toHaveLength(AGENTS_PER_MESSAGE);
  }, 30_000);

  it('ignore handles no agent has', async () => {
    // Arrange
    const known = await agent();
    const author = await user('author');
    const roomId = await room([author]);
    const controlRoom = await room([author]);

    // Act: an unknown handle, then a known one elsewhere to know the subscriber got past the first
    await post(author, roomId, '@agent:nobody-here are you there?');
    await post(author, controlRoom, `@${known.userId} are you there?`);
    await eventually('the control answer', async () => (await messagesOf(controlRoom)).some((message) => message.userId === known.userId));

    // Assess
    expect(ai.requests.map(tagOf)).toEqual([known.tag]);
    expect((await messagesOf(roomId)).map((message) => message.userId)).toEqual([author.userId]);
  }, 30_000);
});

describe('RATE_LIMIT_AGENT_INVOKE_PER_MINUTE', () => {
  /** The limit counts fixed minutes: a burst must not straddle two. */
  async function insideOneMinute(needMs = 15_000) {
    const left = 60_000 - (Date.now() % 60_000);
    if (left < needMs) await sleep(left + 50);
  }

  it("answers 429 past the user's answers a minute, and the user's @mentions spend the same budget; other users go on", async () => {
    // Arrange
    const target = await agent();
    const [spender, other] = [await user('spender'), await user('other')];
    const [roomId, controlRoom] = [await room([spender]), await room([other])];
    await insideOneMinute();

    // Act
    const invokes = [];
    for (let index = 0; index < ANSWERS_PER_MINUTE; index++) {
      invokes.push(await call(`/agents/${target.id}/invoke`, { token: spender.token, body: { roomId } }));
    }
    const refused = await call(`/agents/${target.id}/invoke`, { token: spender.token, body: { roomId } });
    await post(spender, roomId, `@${target.userId} are you still there?`);
    // Posted after: once it is answered the subscriber has seen the mention above.
    await post(other, controlRoom, `@${target.userId} are you there?`);
    await eventually('the control answer', async () => (await messagesOf(controlRoom)).some((message) => message.userId === target.userId));

    // Assess
    expect(invokes.map((invoked) => invoked.status)).toEqual(Array(ANSWERS_PER_MINUTE).fill(201));
    expect(refused).toMatchObject({ status: 429, body: { error: { code: 'rate_limited' } } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect((await messagesOf(roomId)).filter((message) => message.userId === target.userId)).toHaveLength(ANSWERS_PER_MINUTE);
    expect(agentRequests(target.tag)).toHaveLength(ANSWERS_PER_MINUTE + 1);
  }, 30_000);
});

describe('during a handoff', () => {
  it('refuses an invoke with 409 human_handoff_active and stores a mention without answering it, until completed', async () => {
    // Arrange
    const target = await agent();
    const author = await user('author');
    const roomId = await room([author]);
    const controlRoom = await room([author]);
    await post(author, roomId, 'I need a human.');
    const takenOver = await call(`/rooms/${roomId}/handoff`, { apiKey, body: { note: 'customer asked' } });
    expect(takenOver.status, JSON.stringify(takenOver.body)).toBe(201);

    // Act
    const invoked = await call(`/agents/${target.id}/invoke`, { token: author.token, body: { roomId } });
    const mention = await post(author, roomId, `@${target.userId} are you still there?`);
    // A mention elsewhere, posted after: once it is answered the subscriber has seen the first.
    await post(author, controlRoom, `@${target.userId} hello`);
    await eventually('the control answer', async () => (await messagesOf(controlRoom)).some((message) => message.userId === target.userId));
    await sleep(500);
    const duringHandoff = await messagesOf(roomId);
    const completed = await call(`/rooms/${roomId}/handoff`, { method: 'PATCH', apiKey, body: { disposition: 'resolved' } });
    const afterwards = await call(`/agents/${target.id}/invoke`, { token: author.token, body: { roomId } });

    // Assess
    expect(invoked).toMatchObject({ status: 409, body: { error: { code: 'human_handoff_active' } } });
    expect(duringHandoff.at(-1)).toMatchObject({ id: mention.id, userId: author.userId });
    expect(duringHandoff.filter((message) => message.userId === target.userId)).toEqual([]);
    expect(agentRequests(target.tag)).toHaveLength(2);
    expect(completed.status).toBe(200);
    expect(afterwards).toMatchObject({ status: 201, body: { message: { userId: target.userId } } });
  }, 30_000);
});
