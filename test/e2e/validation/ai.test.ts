import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { agentBody, agentHandle, createAgent, dispositionCode, postThread, setAiQuota } from '../../support/ai/fixtures';
import { api, createTestProject, type TestProject, uniqueId } from '../../support/api';
import {
  type Body,
  createValidationProject,
  describeValidationMatrix,
  drop,
  expectInvalid,
  idVariants,
  long,
  operator,
  type RouteRequests,
  sender,
  set,
  textVariants,
  type Variant,
} from '../../support/matrices/validation-driver';

/** Bad input to the AI area's routes (summaries, suggestions, agents, handoffs, dispositions, quotas); the checks are the matrix's (`validation-driver.ts`). */

let project: TestProject;
/** Another project, whose AI quota the SetProjectAiQuota requests set. */
let rotatable: TestProject;
let adminToken: string;
let memberToken: string;
let roomId: string;

/**
 * AI fixtures. The thread summary is rate limited per user (10 a minute, counted before the body is
 * read), so every SummarizeThread request comes from a user of its own (a project admin, who may
 * read the room without being a member); the path parameter, body and unknown-room cases draw from
 * the pools too, so the pools hold a request for each of them and the control.
 */
const summaryTokens: string[] = [];
/** The thread (root and two replies, in `roomId`) the SummarizeThread and SuggestReplies requests name. */
let thread: { rootId: number; replyIds: number[] };
/** The agent the UpdateAgent and InvokeAgent requests act on, and StartRoomHandoff names. */
let agentId: string;
/** Agents for the DeleteAgent requests to delete, one per request. */
const disposableAgentIds: string[] = [];
/** Rooms without a handoff for the StartRoomHandoff requests, and rooms with an active one for CompleteRoomHandoff. */
const handoffFreeRoomIds: string[] = [];
const handoffActiveRoomIds: string[] = [];
const VALIDATION_DISPOSITION = { code: 'validation_code', label: 'Validation' };

beforeAll(async () => {
  [{ project, adminToken, memberToken, roomId }, rotatable] = await Promise.all([
    createValidationProject('validation-ai'),
    createTestProject('rotatable'),
  ]);
  const newRoom = async () => {
    const id = uniqueId('ai-room');
    await api('/rooms', { apiKey: project.apiKey, body: { id, type: 'group' } });
    return id;
  };
  let tokens: string[];
  let agents: string[];
  let freeRooms: string[];
  let activeRooms: string[];
  [tokens, thread, agentId, agents, freeRooms, activeRooms] = await Promise.all([
    Promise.all(Array.from({ length: 26 }, () => project.token(uniqueId('summarizer'), ['admin']))),
    postThread(project.projectId, { token: memberToken }, roomId),
    createAgent({ apiKey: project.apiKey }).then((agent) => agent.id),
    Promise.all(Array.from({ length: 5 }, () => createAgent({ apiKey: project.apiKey }).then((agent) => agent.id))),
    Promise.all(Array.from({ length: 24 }, newRoom)),
    Promise.all(
      Array.from({ length: 24 }, async () => {
        const id = await newRoom();
        await api(`/rooms/${id}/handoff`, { method: 'POST', apiKey: project.apiKey, body: {} });
        return id;
      }),
    ),
  ]);
  summaryTokens.push(...tokens);
  disposableAgentIds.push(...agents);
  handoffFreeRoomIds.push(...freeRooms);
  handoffActiveRoomIds.push(...activeRooms);
});

/** How to make a request each route of the area accepts. */
const requests: RouteRequests = {
  SummarizeThread: {
    path: () => `/messages/${thread.rootId}/summary`,
    auth: () => ({ token: summaryTokens.pop() ?? adminToken }),
    body: () => ({ roomId }),
    success: 200,
    roomInBody: true,
  },
  SuggestReplies: {
    path: () => '/messages/suggest-replies',
    auth: () => ({ token: memberToken }),
    body: () => ({ roomId, messageId: thread.rootId }),
    success: 200,
    roomInBody: true,
  },
  ListRoomSummaries: { path: () => `/rooms/${roomId}/summaries?limit=5`, auth: () => ({ token: memberToken }), success: 200 },
  GetAiUsage: { path: () => '/admin/ai/usage', auth: () => ({ apiKey: project.apiKey }), success: 200 },
  SetProjectAiQuota: {
    // `null` leaves the project on the default quota, so the control changes nothing.
    path: () => `/platform/projects/${rotatable.projectId}/ai-quota`,
    auth: operator,
    body: () => ({ monthlyInvocations: null }),
    success: 200,
  },
  CreateAgent: {
    path: () => '/agents',
    auth: () => ({ token: adminToken }),
    body: () => agentBody({ model: 'validation-model' }),
    success: 201,
  },
  ListAgents: { path: () => '/agents', auth: () => ({ token: memberToken }), success: 200 },
  UpdateAgent: {
    path: () => `/agents/${agentId}`,
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ name: 'Validation agent', instructions: 'Answer in one short sentence.', model: 'validation-model' }),
    success: 200,
  },
  DeleteAgent: {
    path: () => `/agents/${disposableAgentIds.pop() ?? 'agt_noneLeft'}`,
    auth: () => ({ apiKey: project.apiKey }),
    success: 204,
  },
  InvokeAgent: {
    path: () => `/agents/${agentId}/invoke`,
    auth: () => ({ token: memberToken }),
    body: () => ({ roomId, prompt: 'Say hello' }),
    success: 201,
    roomInBody: true,
  },
  GetRoomHandoff: { path: () => `/rooms/${roomId}/handoff`, auth: () => ({ token: memberToken }), success: 200 },
  StartRoomHandoff: {
    path: () => `/rooms/${handoffFreeRoomIds.pop() ?? uniqueId('none-left')}/handoff`,
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ agentId, note: 'customer asks for a refund' }),
    success: 201,
    optionalBody: true,
  },
  CompleteRoomHandoff: {
    path: () => `/rooms/${handoffActiveRoomIds.pop() ?? uniqueId('none-left')}/handoff`,
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ disposition: 'resolved', note: 'refund granted' }),
    success: 200,
  },
  ListDispositions: { path: () => '/agent-queue/dispositions', auth: () => ({ token: memberToken }), success: 200 },
  SetDispositions: {
    path: () => '/admin/agent-queue/dispositions',
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ dispositions: [VALIDATION_DISPOSITION] }),
    success: 200,
  },
  ListAgentTasks: { path: () => '/agent-queue/tasks?status=resolved&limit=10', auth: () => ({ apiKey: project.apiKey }), success: 200 },
};

/** Agent text fields are trimmed before their bounds are checked, so a blank one is empty. */
const agentTextVariants = (key: string, options: { required?: boolean; nullable?: boolean; max: number }) => [
  ...textVariants(key, options),
  [`${key} blank`, set(key, '   '), `body.${key}`] as Variant,
];

/** Agent handles: 2-32 of [a-z0-9-], starting with a letter; optional (derived from the name when absent). */
const handleVariants = (): Variant[] => [
  ...textVariants('handle'),
  ['handle of one character', set('handle', 'a'), 'body.handle'],
  ['handle of 33 characters', set('handle', long(33)), 'body.handle'],
  ['handle in upper case', set('handle', 'Support'), 'body.handle'],
  ['handle starting with a digit', set('handle', '1support'), 'body.handle'],
  ['handle starting with a dash', set('handle', '-support'), 'body.handle'],
  ['handle with an underscore', set('handle', 'release_bot'), 'body.handle'],
  ['handle with a space', set('handle', 'release bot'), 'body.handle'],
  ['handle with agent: in front', set('handle', 'agent:support'), 'body.handle'],
];

/** A note of a handoff or its completion: any string of at most 2000 characters. */
const noteVariants = (): Variant[] => [
  ['note a number', set('note', 42), 'body.note'],
  ['note null', set('note', null), 'body.note'],
  ['note an object', set('note', { text: 'x' }), 'body.note'],
  ['note of 2001 characters', set('note', long(2001)), 'body.note'],
];

/** Changes to the first disposition entry of a SetDispositions body. */
const setEntry = (key: string, value: unknown) => (body: Body) => ({
  dispositions: [{ ...(body.dispositions as Body[])[0], [key]: value }],
});
const dropEntry = (key: string) => (body: Body) => ({ dispositions: [drop(key)((body.dispositions as Body[])[0] as Body)] });

const dispositionVariants = (): Variant[] => [
  ['dispositions missing', drop('dispositions'), 'body.dispositions'],
  ['dispositions a string', set('dispositions', 'resolved'), 'body.dispositions'],
  ['dispositions null', set('dispositions', null), 'body.dispositions'],
  ['dispositions an object', set('dispositions', VALIDATION_DISPOSITION), 'body.dispositions'],
  [
    'dispositions with 51 entries',
    set(
      'dispositions',
      Array.from({ length: 51 }, (_, i) => ({ code: `code_${i}`, label: `Code ${i}` })),
    ),
    'body.dispositions',
  ],
  ['an entry that is a string', set('dispositions', ['validation_code']), 'body.dispositions.0'],
  ['an entry with an unknown field', setEntry('color', 'red'), 'body.dispositions.0'],
  ['code missing', dropEntry('code'), 'body.dispositions.0.code'],
  ['code a number', setEntry('code', 42), 'body.dispositions.0.code'],
  ['code null', setEntry('code', null), 'body.dispositions.0.code'],
  ['code empty', setEntry('code', ''), 'body.dispositions.0.code'],
  ['code of one character', setEntry('code', 'a'), 'body.dispositions.0.code'],
  ['code of 41 characters', setEntry('code', long(41)), 'body.dispositions.0.code'],
  ['code in upper case', setEntry('code', 'Refunded'), 'body.dispositions.0.code'],
  ['code starting with a digit', setEntry('code', '1st_contact'), 'body.dispositions.0.code'],
  ['code with a dash', setEntry('code', 'follow-up'), 'body.dispositions.0.code'],
  ['code a default one', setEntry('code', 'resolved'), 'body.dispositions.0.code'],
  [
    'code listed twice',
    (body) => ({ dispositions: [...(body.dispositions as Body[]), { code: VALIDATION_DISPOSITION.code, label: 'Again' }] }),
    'body.dispositions.1.code',
  ],
  ['label missing', dropEntry('label'), 'body.dispositions.0.label'],
  ['label a number', setEntry('label', 42), 'body.dispositions.0.label'],
  ['label null', setEntry('label', null), 'body.dispositions.0.label'],
  ['label empty', setEntry('label', ''), 'body.dispositions.0.label'],
  ['label blank', setEntry('label', '   '), 'body.dispositions.0.label'],
  ['label of 81 characters', setEntry('label', long(81)), 'body.dispositions.0.label'],
];

const fieldVariants: Record<string, Variant[]> = {
  SummarizeThread: idVariants('roomId', true),
  SuggestReplies: [
    ...idVariants('roomId', true),
    ['messageId a string', set('messageId', String(1)), 'body.messageId'],
    ['messageId null', set('messageId', null), 'body.messageId'],
    ['messageId zero', set('messageId', 0), 'body.messageId'],
    ['messageId negative', set('messageId', -1), 'body.messageId'],
    ['messageId fractional', set('messageId', 1.5), 'body.messageId'],
  ],
  SetProjectAiQuota: [
    ['monthlyInvocations missing', drop('monthlyInvocations'), 'body.monthlyInvocations'],
    ['monthlyInvocations a string', set('monthlyInvocations', '100'), 'body.monthlyInvocations'],
    ['monthlyInvocations a boolean', set('monthlyInvocations', true), 'body.monthlyInvocations'],
    ['monthlyInvocations an object', set('monthlyInvocations', { value: 100 }), 'body.monthlyInvocations'],
    ['monthlyInvocations negative', set('monthlyInvocations', -1), 'body.monthlyInvocations'],
    ['monthlyInvocations fractional', set('monthlyInvocations', 1.5), 'body.monthlyInvocations'],
    ['monthlyInvocations over 100000000', set('monthlyInvocations', 100_000_001), 'body.monthlyInvocations'],
  ],
  CreateAgent: [
    ...handleVariants(),
    ...agentTextVariants('name', { required: true, max: 80 }),
    ...agentTextVariants('instructions', { required: true, max: 4000 }),
    ...agentTextVariants('model', { max: 200 }),
  ],
  UpdateAgent: [
    ['no field at all', () => ({}), 'body'],
    ['handle, which never changes', set('handle', agentHandle()), 'body'],
    ...agentTextVariants('name', { max: 80 }),
    ...agentTextVariants('instructions', { max: 4000 }),
    ...agentTextVariants('model', { nullable: true, max: 200 }),
  ],
  InvokeAgent: [
    ...idVariants('roomId', true),
    ['prompt a number', set('prompt', 42), 'body.prompt'],
    ['prompt null', set('prompt', null), 'body.prompt'],
    ['prompt an object', set('prompt', { text: 'x' }), 'body.prompt'],
    ['prompt of 4001 characters', set('prompt', long(4001)), 'body.prompt'],
  ],
  StartRoomHandoff: [...idVariants('agentId', false), ...noteVariants()],
  CompleteRoomHandoff: [
    ['disposition missing', drop('disposition'), 'body.disposition'],
    ['disposition a number', set('disposition', 42), 'body.disposition'],
    ['disposition null', set('disposition', null), 'body.disposition'],
    ['disposition an object', set('disposition', { code: 'resolved' }), 'body.disposition'],
    ['disposition empty', set('disposition', ''), 'body.disposition'],
    ['disposition of 201 characters', set('disposition', long(201)), 'body.disposition'],
    ...noteVariants(),
  ],
  SetDispositions: dispositionVariants(),
};

describeValidationMatrix('Ai', requests, fieldVariants);

describe('query parameters', () => {
  it.each(['0', '101', '1.5', 'lots'])('GET /rooms/{roomId}/summaries?limit=%s → 400 naming query.limit', async (limit) => {
    // Act
    const response = await api(`/rooms/${roomId}/summaries?limit=${limit}`, { token: memberToken });

    // Assess
    expectInvalid(response, 'query.limit');
  });

  it.each([
    { query: 'status=open', field: 'query.status' },
    { query: 'status=CLAIMED', field: 'query.status' },
    { query: 'status=', field: 'query.status' },
    { query: 'limit=0', field: 'query.limit' },
    { query: 'limit=101', field: 'query.limit' },
    { query: 'limit=1.5', field: 'query.limit' },
    { query: 'limit=lots', field: 'query.limit' },
  ])('GET /agent-queue/tasks?$query → 400 naming $field', async ({ query, field }) => {
    // Act
    const response = await api(`/agent-queue/tasks?${query}`, { apiKey: project.apiKey });

    // Assess
    expectInvalid(response, field);
  });

  it.each(['', '?status=claimed', '?status=resolved&limit=1', '?limit=100'])(
    'GET /agent-queue/tasks%s is accepted (the values and bounds)',
    async (query) => {
      // Act
      const response = await api(`/agent-queue/tasks${query}`, { apiKey: project.apiKey });

      // Assess
      expect({ status: response.status, error: response.body?.error }).toEqual({ status: 200, error: undefined });
    },
  );

  it.each(['1', '100'])('GET /rooms/{roomId}/summaries?limit=%s is accepted (the bounds)', async (limit) => {
    // Act
    const response = await api(`/rooms/${roomId}/summaries?limit=${limit}`, { token: memberToken });

    // Assess
    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { summaries: [] } });
  });
});

const send = sender(requests);

describe('AI requests beyond the body schemas', () => {
  const freshSummarizer = () => project.token(uniqueId('summarizer'), ['admin']);
  const newRoomByKey = async () => {
    const id = uniqueId('ai-room');
    await api('/rooms', { apiKey: project.apiKey, body: { id, type: 'group' } });
    return id;
  };
  const unknownAgentPath = (suffix = '') => `/agents/agt_unknown${randomBytes(5).toString('hex')}${suffix}`;

  it('SummarizeThread answers for any message of the thread, from its root', async () => {
    // Act
    const response = await api(`/messages/${thread.replyIds[1]}/summary`, { token: await freshSummarizer(), body: { roomId } });

    // Assess
    expect({ status: response.status, body: response.body }).toEqual({
      status: 200,
      body: { summary: expect.stringMatching(/^- .+(\n- .+)*$/), rootMessageId: thread.rootId, messageCount: 3, truncated: false },
    });
  });

  it('SummarizeThread of a thread of 2 messages → 400 thread_too_short', async () => {
    // Prepare
    const short = await postThread(project.projectId, { token: memberToken }, roomId, 1);

    // Act
    const response = await api(`/messages/${short.rootId}/summary`, { token: await freshSummarizer(), body: { roomId } });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'thread_too_short' });
  });

  it.each([
    { variant: "a message of another room (the thread's root named with a room it is not in)", other: true },
    { variant: 'a message id that exists nowhere', other: false },
  ])('SummarizeThread of $variant → 404 message_not_found', async ({ other }) => {
    // Prepare
    const [token, otherRoom] = await Promise.all([freshSummarizer(), newRoomByKey()]);
    const [messageId, inRoom] = other ? [thread.rootId, otherRoom] : ['9007199254740991', roomId];

    // Act
    const response = await api(`/messages/${messageId}/summary`, { token, body: { roomId: inRoom } });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 404, code: 'message_not_found' });
  });

  it('SuggestReplies answers at most three suggestions and the model, with or without messageId', async () => {
    // Act
    const [latest, upTo] = [
      await send('SuggestReplies', { body: { roomId } }),
      await send('SuggestReplies', { body: requests.SuggestReplies?.body?.() }),
    ];

    // Assess
    for (const response of [latest, upTo]) {
      expect({ status: response.status, keys: Object.keys(response.body ?? {}).sort() }).toEqual({
        status: 200,
        keys: ['model', 'suggestions'],
      });
      expect(response.body.suggestions.length).toBeGreaterThan(0);
      expect(response.body.suggestions.length).toBeLessThanOrEqual(3);
      for (const suggestion of response.body.suggestions) expect(suggestion).toEqual(expect.any(String));
      expect(response.body.model).toEqual(expect.any(String));
    }
  });

  it("SuggestReplies with a messageId that is not the room's → 404 message_not_found", async () => {
    // Prepare
    const otherRoom = await newRoomByKey();

    // Act
    const response = await api('/messages/suggest-replies', { token: adminToken, body: { roomId: otherRoom, messageId: thread.rootId } });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 404, code: 'message_not_found' });
  });

  it('CreateAgent answers 409 agent_handle_taken to a handle the project has, and frees it on delete', async () => {
    // Prepare
    const body = requests.CreateAgent?.body?.() as Body;
    const first = await send('CreateAgent', { body });

    // Act
    const again = await send('CreateAgent', { body: { ...body, name: 'Another' } });
    const deleted = await api(`/agents/${first.body.id}`, { apiKey: project.apiKey, method: 'DELETE' });
    const afterDelete = await send('CreateAgent', { body });

    // Assess
    expect(first.body).toMatchObject({ handle: body.handle, userId: `agent:${body.handle}`, model: 'validation-model' });
    expect({ status: again.status, code: again.body?.error?.code }).toEqual({ status: 409, code: 'agent_handle_taken' });
    expect(deleted.status).toBe(204);
    expect(afterDelete.status).toBe(201);
    expect(afterDelete.body.id).not.toBe(first.body.id);
  });

  it('UpdateAgent accepts model null (the agent answers with AI_MODEL again) and keeps the other fields', async () => {
    // Prepare
    const agent = await createAgent({ apiKey: project.apiKey }, { model: 'some-model' });

    // Act
    const response = await api(`/agents/${agent.id}`, { apiKey: project.apiKey, method: 'PATCH', body: { model: null } });

    // Assess
    expect({ status: response.status, body: response.body }).toMatchObject({
      status: 200,
      body: { id: agent.id, handle: agent.handle, name: agent.name, instructions: agent.instructions, model: null },
    });
  });

  it.each([
    { id: 'UpdateAgent', path: () => unknownAgentPath() },
    { id: 'DeleteAgent', path: () => unknownAgentPath() },
    { id: 'InvokeAgent', path: () => unknownAgentPath('/invoke') },
  ])('$id of an agent that does not exist → 404 agent_not_found', async ({ id, path }) => {
    // Act
    const response = await send(id, { path: path(), body: requests[id]?.body?.() });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 404, code: 'agent_not_found' });
  });

  it("InvokeAgent without a prompt answers 201 with the agent's message in the room", async () => {
    // Act
    const response = await send('InvokeAgent', { body: { roomId } });

    // Assess
    expect(response.status).toBe(201);
    expect(response.body.message).toMatchObject({ roomId, userId: expect.stringMatching(/^agent:/), content: expect.any(String) });
  });

  it('InvokeAgent during a handoff → 409 human_handoff_active, and nothing is posted', async () => {
    // Prepare
    const handedOff = await newRoomByKey();
    await api(`/rooms/${handedOff}/handoff`, { method: 'POST', apiKey: project.apiKey, body: {} });

    // Act
    const response = await api(`/agents/${agentId}/invoke`, { token: adminToken, body: { roomId: handedOff } });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 409, code: 'human_handoff_active' });
    expect((await api(`/rooms/${handedOff}/messages`, { apiKey: project.apiKey })).body.messages).toEqual([]);
  });

  it('StartRoomHandoff accepts no body at all (no agent, no note); a second take-over → 409 handoff_active', async () => {
    // Prepare
    const room = await newRoomByKey();

    // Act
    const first = await api(`/rooms/${room}/handoff`, { method: 'POST', apiKey: project.apiKey });
    const second = await api(`/rooms/${room}/handoff`, { method: 'POST', apiKey: project.apiKey, body: {} });

    // Assess
    expect({ status: first.status, error: first.body?.error }).toEqual({ status: 201, error: undefined });
    expect(first.body).toMatchObject({ roomId: room, state: 'human_active', agentId: null, note: null, takenBy: 'service' });
    expect({ status: second.status, code: second.body?.error?.code }).toEqual({ status: 409, code: 'handoff_active' });
  });

  it("CompleteRoomHandoff with a code the project lacks → 400 unknown_disposition naming the allowed codes; the project's own code is accepted", async () => {
    // Prepare
    const room = await newRoomByKey();
    await api(`/rooms/${room}/handoff`, { method: 'POST', apiKey: project.apiKey, body: {} });
    await send('SetDispositions', { body: requests.SetDispositions?.body?.() });

    // Act
    const unknown = await send('CompleteRoomHandoff', { path: `/rooms/${room}/handoff`, body: { disposition: 'refunded' } });
    const own = await send('CompleteRoomHandoff', { path: `/rooms/${room}/handoff`, body: { disposition: VALIDATION_DISPOSITION.code } });

    // Assess
    expect({ status: unknown.status, code: unknown.body?.error?.code }).toEqual({ status: 400, code: 'unknown_disposition' });
    expect(unknown.body.error.details).toEqual({
      allowed: ['resolved', 'escalated', 'follow_up', 'no_response', 'spam', VALIDATION_DISPOSITION.code],
    });
    expect({ status: own.status, state: own.body.state, disposition: own.body.disposition }).toEqual({
      status: 200,
      state: 'completed',
      disposition: VALIDATION_DISPOSITION.code,
    });
  });

  it('CompleteRoomHandoff of a room without an active handoff → 409 no_active_handoff', async () => {
    // Act
    const response = await send('CompleteRoomHandoff', { path: `/rooms/${roomId}/handoff`, body: requests.CompleteRoomHandoff?.body?.() });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 409, code: 'no_active_handoff' });
  });

  it('SetDispositions accepts no codes of its own and 50 (the bounds)', async () => {
    // Prepare
    const fifty = Array.from({ length: 50 }, () => ({ code: dispositionCode(), label: 'Bound' }));

    // Act
    const none = await send('SetDispositions', { body: { dispositions: [] } });
    const full = await send('SetDispositions', { body: { dispositions: fifty } });
    await send('SetDispositions', { body: requests.SetDispositions?.body?.() });

    // Assess
    expect({ status: none.status, count: none.body.dispositions?.length }).toEqual({ status: 200, count: 5 });
    expect({ status: full.status, count: full.body.dispositions?.length }).toEqual({ status: 200, count: 55 });
  });

  it('SetProjectAiQuota accepts 0 and 100000000 (the bounds); null returns the project to the default', async () => {
    // Prepare
    const initial = await setAiQuota(rotatable.projectId, null);

    // Act
    const zero = await send('SetProjectAiQuota', { body: { monthlyInvocations: 0 } });
    const most = await send('SetProjectAiQuota', { body: { monthlyInvocations: 100_000_000 } });
    const cleared = await send('SetProjectAiQuota', { body: { monthlyInvocations: null } });

    // Assess
    expect({ status: zero.status, body: zero.body }).toEqual({
      status: 200,
      body: { month: initial.month, used: initial.used, quota: 0, remaining: 0 },
    });
    expect({ status: most.status, quota: most.body.quota, remaining: most.body.remaining }).toEqual({
      status: 200,
      quota: 100_000_000,
      remaining: 100_000_000 - initial.used,
    });
    expect({ status: cleared.status, body: cleared.body }).toEqual({ status: 200, body: initial });
  });

  it('SetProjectAiQuota of a project that does not exist → 404 project_not_found', async () => {
    // Act
    const response = await send('SetProjectAiQuota', {
      path: `/platform/projects/${uniqueId('missing')}/ai-quota`,
      body: requests.SetProjectAiQuota?.body?.(),
    });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 404, code: 'project_not_found' });
  });
});
