import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHandoff } from '#domain/ai/handoff';
import { isHandoffActive, requireNoHandoff } from '#domain/ai/handoff-state';
import { createAgent } from '../support/ai/fixtures';
import { type ApiResponse, api, createTestProject, ISO_TIMESTAMP, newUser, runtime, type TestProject, uniqueId } from '../support/api';
import { eventually, type ReceivedRequest, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { connectWelcomed, type Frame, type RoomSocket } from '../support/ws';

/**
 * Human handoff end to end on the shared runtime: the spec's state table (no handoff →
 * `human_active` → `completed`, and again), who may do what, the `handoff` frame on a connected
 * socket, the `handoff` webhook at a real receiver, the agent task and the queue, disposition
 * codes, what members read (the frames' fields) against what staff read (the whole record), and
 * tenant isolation. The context summary is the AI's when the runtime has `AI_BASE_URL`,
 * an excerpt of the last 12 messages otherwise, or when the AI call fails (a quota of 0 here).
 */

const DEFAULT_CODES = ['resolved', 'escalated', 'follow_up', 'no_response', 'spam'];
const aiConfigured = () => Boolean(runtime().env.AI_BASE_URL);

interface Cast {
  readonly project: TestProject;
  readonly owner: { userId: string; token: string };
  readonly member: { userId: string; token: string };
  readonly guest: { userId: string; token: string };
  readonly outsider: { userId: string; token: string };
  readonly moderator: { userId: string; token: string };
  readonly outsideModerator: { userId: string; token: string };
  readonly admin: { userId: string; token: string };
  readonly projectOwner: { userId: string; token: string };
}

/**
 * A project with one user per role: the room's owner, a member and a guest of it, a moderator who
 * staffs it (a member), and project staff outside it.
 */
async function newCast(name: string): Promise<Cast> {
  const project = await createTestProject(name);
  const [owner, member, guest, outsider, moderator, outsideModerator, admin, projectOwner] = await Promise.all([
    newUser(project, 'owner'),
    newUser(project, 'member'),
    newUser(project, 'guest', ['guest']),
    newUser(project, 'outsider'),
    newUser(project, 'moderator', ['moderator']),
    newUser(project, 'outside-moderator', ['moderator']),
    newUser(project, 'admin', ['admin']),
    newUser(project, 'powner', ['owner']),
  ]);
  return { project, owner, member, guest, outsider, moderator, outsideModerator, admin, projectOwner };
}

/** A group room of the cast's owner with its member, its moderator and its guest (the guest joins with room role `guest`). */
async function newRoom(cast: Cast): Promise<string> {
  const roomId = uniqueId('room');
  const created = await api('/rooms', {
    token: cast.owner.token,
    body: { id: roomId, type: 'group', members: [cast.member.userId, cast.moderator.userId] },
  });
  if (created.status !== 201) throw new Error(`room creation failed: ${created.status} ${JSON.stringify(created.body)}`);
  const added = await api(`/rooms/${roomId}/members`, { token: cast.owner.token, body: { userId: cast.guest.userId, role: 'guest' } });
  if (added.status !== 201 && added.status !== 200)
    throw new Error(`adding the guest failed: ${added.status} ${JSON.stringify(added.body)}`);
  return roomId;
}

type Credentials = { token: string } | { apiKey: string };
const handoffOf = (roomId: string, who: Credentials) => api(`/rooms/${roomId}/handoff`, who);
const takeOver = (roomId: string, who: Credentials, body: Record<string, unknown> = {}) =>
  api(`/rooms/${roomId}/handoff`, { ...who, method: 'POST', body });
const complete = (roomId: string, who: Credentials, body: Record<string, unknown>) =>
  api(`/rooms/${roomId}/handoff`, { ...who, method: 'PATCH', body });
const tasksOf = async (cast: Cast, status?: string): Promise<any[]> => {
  const listed = await api(`/agent-queue/tasks?limit=100${status ? `&status=${status}` : ''}`, { apiKey: cast.project.apiKey });
  if (listed.status !== 200) throw new Error(`listing tasks failed: ${listed.status} ${JSON.stringify(listed.body)}`);
  return listed.body.tasks;
};
/** What a room's members read of a handoff: the fields its frames carry, no note and no summary. */
const memberView = (record: Record<string, unknown>) => ({
  roomId: record.roomId,
  state: record.state,
  handoffId: record.handoffId,
  agent_task_id: record.agent_task_id,
  agentId: record.agentId,
  takenBy: record.takenBy,
  disposition: record.disposition,
});
const codesOf = (response: ApiResponse) => (response.body.dispositions as { code: string }[]).map((entry) => entry.code);

let cast: Cast;
let other: Cast;
let receiver: WebhookReceiver;
/** An agent of `cast`'s project, and one of `other`'s. */
let agent: Awaited<ReturnType<typeof createAgent>>;
let otherAgent: Awaited<ReturnType<typeof createAgent>>;
const sockets: RoomSocket[] = [];

beforeAll(async () => {
  [cast, other, receiver] = await Promise.all([newCast('handoff'), newCast('handoff-other'), startWebhookReceiver()]);
  [agent, otherAgent] = await Promise.all([createAgent({ apiKey: cast.project.apiKey }), createAgent({ apiKey: other.project.apiKey })]);
  const registered = await api('/webhooks/register', { apiKey: cast.project.apiKey, body: { url: receiver.url, eventTypes: ['handoff'] } });
  if (registered.status !== 201) throw new Error(`registration failed: ${registered.status} ${JSON.stringify(registered.body)}`);
  receiver.secret = registered.body.secret;
});
afterAll(async () => {
  await Promise.all(sockets.map((socket) => socket.close()));
  await receiver?.close();
});

describe('a take-over of a room with 13 messages', () => {
  let roomId: string;
  let contents: string[];
  let before: ApiResponse;
  let taken: ApiResponse;
  let frame: Frame;
  let webhook: ReceivedRequest;
  let read: ApiResponse;
  let memberRead: ApiResponse;

  beforeAll(async () => {
    roomId = await newRoom(cast);
    contents = Array.from({ length: 13 }, (_, index) => `context message ${String(index + 1).padStart(2, '0')} ${uniqueId('m')}`);
    for (const content of contents) {
      const posted = await api('/messages', { token: cast.member.token, body: { roomId, content } });
      if (posted.status !== 201) throw new Error(`posting failed: ${posted.status}`);
    }
    const socket = await connectWelcomed(roomId, cast.member.token);
    sockets.push(socket);
    before = await handoffOf(roomId, { token: cast.member.token });

    taken = await takeOver(roomId, { token: cast.moderator.token }, { note: 'customer asks for a refund' });

    frame = await socket.next((received) => received.type === 'handoff');
    webhook = await eventually('the handoff webhook', async () =>
      receiver.requests.find((request) => JSON.parse(request.rawBody).payload.handoffId === taken.body.handoffId),
    );
    [read, memberRead] = await Promise.all([
      handoffOf(roomId, { token: cast.moderator.token }),
      handoffOf(roomId, { token: cast.member.token }),
    ]);
  });

  it('starts from no handoff', () => {
    // Assess
    expect(before.status).toBe(200);
    expect(before.body).toEqual({ state: 'none' });
  });

  it('answers 201 with the human_active record, taken by the caller and linked to its task', () => {
    // Assess
    expect(taken.status).toBe(201);
    expect(taken.body).toEqual({
      roomId,
      state: 'human_active',
      handoffId: expect.stringMatching(/^hof_/),
      agent_task_id: expect.stringMatching(/^task_/),
      agentId: null,
      note: 'customer asks for a refund',
      takenBy: cast.moderator.userId,
      takenAt: expect.stringMatching(ISO_TIMESTAMP),
      contextSummary: expect.any(String),
      contextSource: aiConfigured() ? 'ai' : 'excerpt',
      completedAt: null,
      completedBy: null,
      disposition: null,
      completionNote: null,
    });
    expect(read.status).toBe(200);
    expect(read.body).toEqual(taken.body);
  });

  it("shows a member of the room the frame's fields only: no note, no context summary", () => {
    // Assess
    expect(memberRead.status).toBe(200);
    expect(memberRead.body).toEqual({
      roomId,
      state: 'human_active',
      handoffId: taken.body.handoffId,
      agent_task_id: taken.body.agent_task_id,
      agentId: null,
      takenBy: cast.moderator.userId,
      disposition: null,
    });
    expect(JSON.stringify(memberRead.body)).not.toContain('refund');
    expect(JSON.stringify(memberRead.body)).not.toContain('context message');
  });

  it('summarizes the last 12 messages: the AI answer when configured, else an excerpt of exactly those', () => {
    // Assess
    const summary = taken.body.contextSummary as string;
    if (aiConfigured()) {
      // The local provider's answer: bullet lines about the prompt it was sent.
      expect(summary).toMatch(/^- point one: .+\n- point two$/);
    } else {
      for (const content of contents.slice(1)) expect(summary).toContain(content);
      expect(summary).not.toContain(contents[0]);
      expect(summary.split('\n')).toHaveLength(12);
    }
  });

  it('sends the handoff frame to the room socket', () => {
    // Assess
    expect(frame).toEqual({
      type: 'handoff',
      roomId,
      state: 'human_active',
      handoffId: taken.body.handoffId,
      agentTaskId: taken.body.agent_task_id,
      agentId: null,
      takenBy: cast.moderator.userId,
    });
  });

  it('delivers the handoff webhook, signed, with the take-over as payload', () => {
    // Assess
    expect(webhook.signatureValid).toBe(true);
    expect(webhook.headers['x-service-event']).toBe('handoff');
    expect(JSON.parse(webhook.rawBody)).toEqual({
      type: 'handoff',
      projectId: cast.project.projectId,
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
      payload: {
        roomId,
        handoffId: taken.body.handoffId,
        state: 'human_active',
        agentTaskId: taken.body.agent_task_id,
        agentId: null,
        takenBy: cast.moderator.userId,
        note: 'customer asks for a refund',
        contextSummary: taken.body.contextSummary,
        contextSource: taken.body.contextSource,
      },
    });
  });

  it('creates an ai_handoff task claimed by the caller, listed among the claimed tasks', async () => {
    // Act
    const claimed = await tasksOf(cast, 'claimed');

    // Assess
    expect(claimed.find((task) => task.taskId === taken.body.agent_task_id)).toEqual({
      taskId: taken.body.agent_task_id,
      trigger_source: 'ai_handoff',
      status: 'claimed',
      roomId,
      handoffId: taken.body.handoffId,
      claimedBy: cast.moderator.userId,
      claimedAt: taken.body.takenAt,
      note: 'customer asks for a refund',
      createdAt: taken.body.takenAt,
      resolvedAt: null,
      resolvedBy: null,
      disposition: null,
      resolutionNote: null,
    });
  });

  it('blocks AI answers in the room', async () => {
    // Act
    const active = await isHandoffActive(cast.project.projectId, roomId);

    // Assess
    expect(active).toBe(true);
    await expect(requireNoHandoff(cast.project.projectId, roomId)).rejects.toMatchObject({ statusCode: 409, code: 'human_handoff_active' });
  });

  it('refuses a second take-over while active with 409 handoff_active', async () => {
    // Act
    const again = await takeOver(roomId, { token: cast.admin.token });

    // Assess
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('handoff_active');
    expect((await handoffOf(roomId, { apiKey: cast.project.apiKey })).body.handoffId).toBe(taken.body.handoffId);
  });
});

describe('completing a handoff', () => {
  let roomId: string;
  let taken: ApiResponse;
  let unknown: ApiResponse;
  let completed: ApiResponse;
  let frame: Frame;

  beforeAll(async () => {
    roomId = await newRoom(cast);
    const socket = await connectWelcomed(roomId, cast.member.token);
    sockets.push(socket);
    taken = await takeOver(roomId, { apiKey: cast.project.apiKey }, { agentId: agent.id });
    unknown = await complete(roomId, { token: cast.moderator.token }, { disposition: 'no_such_code' });

    completed = await complete(roomId, { token: cast.moderator.token }, { disposition: 'escalated', note: 'sent to billing' });

    frame = await socket.next((received) => received.type === 'handoff' && received.state === 'completed');
  });

  it('claims the task for the agent named, taken by the API key as service', () => {
    // Assess
    expect(taken.status).toBe(201);
    expect(taken.body).toMatchObject({ agentId: agent.id, takenBy: 'service' });
  });

  it('refuses an unknown disposition with 400 unknown_disposition naming the allowed codes, and stays active', () => {
    // Assess
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('unknown_disposition');
    expect(unknown.body.error.details.allowed).toEqual(DEFAULT_CODES);
  });

  it('answers 200 with the completed record', () => {
    // Assess
    expect(completed.status).toBe(200);
    expect(completed.body).toEqual({
      ...taken.body,
      state: 'completed',
      completedAt: expect.stringMatching(ISO_TIMESTAMP),
      completedBy: cast.moderator.userId,
      disposition: 'escalated',
      completionNote: 'sent to billing',
    });
  });

  it('sends the completed frame to the room socket', () => {
    // Assess
    expect(frame).toEqual({ type: 'handoff', roomId, state: 'completed', handoffId: taken.body.handoffId, disposition: 'escalated' });
  });

  it('resolves the linked task with the disposition and moves it to the resolved listing', async () => {
    // Act
    const [claimed, resolved] = await Promise.all([tasksOf(cast, 'claimed'), tasksOf(cast, 'resolved')]);

    // Assess
    expect(claimed.map((task) => task.taskId)).not.toContain(taken.body.agent_task_id);
    expect(resolved.find((task) => task.taskId === taken.body.agent_task_id)).toMatchObject({
      trigger_source: 'ai_handoff',
      status: 'resolved',
      claimedBy: agent.id,
      resolvedAt: completed.body.completedAt,
      resolvedBy: cast.moderator.userId,
      disposition: 'escalated',
      resolutionNote: 'sent to billing',
    });
  });

  it('lets AI answer again', async () => {
    // Act
    const active = await isHandoffActive(cast.project.projectId, roomId);

    // Assess
    expect(active).toBe(false);
    await expect(requireNoHandoff(cast.project.projectId, roomId)).resolves.toBeUndefined();
  });

  it('refuses a second completion with 409 no_active_handoff', async () => {
    // Act
    const again = await complete(roomId, { token: cast.moderator.token }, { disposition: 'resolved' });

    // Assess
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('no_active_handoff');
  });

  it('starts a new handoff with a new task on the next take-over', async () => {
    // Act
    const next = await takeOver(roomId, { token: cast.admin.token });

    // Assess
    expect(next.status).toBe(201);
    expect(next.body).toMatchObject({ state: 'human_active', takenBy: cast.admin.userId, disposition: null, completedAt: null });
    expect(next.body.handoffId).not.toBe(taken.body.handoffId);
    expect(next.body.agent_task_id).not.toBe(taken.body.agent_task_id);
    const claimed = await tasksOf(cast, 'claimed');
    expect(claimed.find((task) => task.taskId === next.body.agent_task_id)).toMatchObject({ claimedBy: cast.admin.userId });
    expect(claimed[0]?.taskId).toBe(next.body.agent_task_id);
  });
});

describe('a room that never had a handoff', () => {
  it('refuses a completion with 409 no_active_handoff', async () => {
    // Prepare
    const roomId = await newRoom(cast);

    // Act
    const completed = await complete(roomId, { token: cast.moderator.token }, { disposition: 'resolved' });

    // Assess
    expect(completed.status).toBe(409);
    expect(completed.body.error.code).toBe('no_active_handoff');
  });

  it('answers 404 room_not_found for a room that does not exist', async () => {
    // Act
    const responses = await Promise.all([
      handoffOf(uniqueId('nowhere'), { token: cast.moderator.token }),
      takeOver(uniqueId('nowhere'), { token: cast.moderator.token }),
      complete(uniqueId('nowhere'), { token: cast.moderator.token }, { disposition: 'resolved' }),
    ]);

    // Assess
    expect(responses.map((response) => [response.status, response.body.error.code])).toEqual([
      [404, 'room_not_found'],
      [404, 'room_not_found'],
      [404, 'room_not_found'],
    ]);
  });

  it.each([
    { variant: 'an id no agent has', agentId: () => uniqueId('agt') },
    { variant: "another project's agent", agentId: () => otherAgent.id },
  ])('answers 404 agent_not_found for $variant, and starts nothing', async ({ agentId }) => {
    // Prepare
    const roomId = await newRoom(cast);

    // Act
    const taken = await takeOver(roomId, { token: cast.moderator.token }, { agentId: agentId() });

    // Assess
    expect({ status: taken.status, code: taken.body.error?.code }).toEqual({ status: 404, code: 'agent_not_found' });
    expect((await handoffOf(roomId, { apiKey: cast.project.apiKey })).body).toEqual({ state: 'none' });
    expect((await tasksOf(cast)).map((task) => task.roomId)).not.toContain(roomId);
  });

  it('validates the bodies: a note of 2001 characters, an unknown field', async () => {
    // Prepare
    const roomId = await newRoom(cast);

    // Act
    const [longNote, extra] = await Promise.all([
      takeOver(roomId, { token: cast.moderator.token }, { note: 'x'.repeat(2001) }),
      takeOver(roomId, { token: cast.moderator.token }, { agent: 'a' }),
    ]);

    // Assess
    expect([longNote.status, extra.status]).toEqual([400, 400]);
    expect((await handoffOf(roomId, { token: cast.moderator.token })).body).toEqual({ state: 'none' });
  });
});

describe('the excerpt instead of an AI summary', () => {
  it('falls back to the last 12 messages with contextSource excerpt (quota of 0)', async () => {
    // Prepare
    const broke = await newCast('handoff-quota');
    const quota = await api(`/platform/projects/${broke.project.projectId}/ai-quota`, {
      method: 'PUT',
      body: { monthlyInvocations: 0 },
      headers: { 'x-service-operator-key': runtime().operatorKey },
    });
    expect(quota.status).toBe(200);
    const roomId = await newRoom(broke);
    const contents = Array.from({ length: 13 }, (_, index) => `quota message ${String(index + 1).padStart(2, '0')}`);
    for (const content of contents) await api('/messages', { token: broke.owner.token, body: { roomId, content } });

    // Act
    const taken = await takeOver(roomId, { token: broke.moderator.token });

    // Assess
    expect(taken.status).toBe(201);
    expect(taken.body.contextSource).toBe('excerpt');
    for (const content of contents.slice(1)) expect(taken.body.contextSummary).toContain(content);
    expect(taken.body.contextSummary).not.toContain(contents[0]);
  });

  it('uses the excerpt without calling AI when AI_BASE_URL is unset (the domain call, in this process)', async () => {
    // Prepare
    const roomId = await newRoom(cast);
    const contents = Array.from({ length: 13 }, (_, index) => `plain message ${String(index + 1).padStart(2, '0')}`);
    for (const content of contents) await api('/messages', { token: cast.owner.token, body: { roomId, content } });
    const baseUrl = process.env.AI_BASE_URL;
    delete process.env.AI_BASE_URL;

    // Act
    const taken = await startHandoff({ kind: 'service', projectId: cast.project.projectId }, roomId, {}).finally(() => {
      if (baseUrl !== undefined) process.env.AI_BASE_URL = baseUrl;
    });

    // Assess
    expect(taken.contextSource).toBe('excerpt');
    expect(taken.contextSummary.split('\n')).toEqual(
      contents.slice(1).map((content) => expect.stringMatching(new RegExp(`^\\[\\d+\\] ${cast.owner.userId}: ${content}$`))),
    );
    expect((await handoffOf(roomId, { token: cast.moderator.token })).body).toMatchObject({
      state: 'human_active',
      contextSource: 'excerpt',
    });
  });

  it('is empty for a room without messages', async () => {
    // Prepare
    const roomId = await newRoom(cast);

    // Act
    const taken = await takeOver(roomId, { token: cast.moderator.token });

    // Assess
    expect(taken.status).toBe(201);
    expect(taken.body).toMatchObject({ contextSummary: '', contextSource: 'excerpt' });
  });
});

describe('who may take over and complete', () => {
  it('lets a moderator who is a member of the room take over and complete', async () => {
    // Prepare
    const roomId = await newRoom(cast);

    // Act
    const taken = await takeOver(roomId, { token: cast.moderator.token });
    const completed = await complete(roomId, { token: cast.moderator.token }, { disposition: 'resolved' });

    // Assess
    expect([taken.status, completed.status]).toEqual([201, 200]);
    expect([taken.body.takenBy, completed.body.completedBy]).toEqual([cast.moderator.userId, cast.moderator.userId]);
  });

  describe('a moderator outside a private room, which history refuses them too', () => {
    let roomId: string;
    beforeAll(async () => {
      roomId = await newRoom(cast);
      await api('/messages', { token: cast.member.token, body: { roomId, content: 'my order number is 4711' } });
    });

    it('gets 403 not_a_member on POST with no context, and the room keeps no handoff', async () => {
      // Act
      const [history, taken] = await Promise.all([
        api(`/rooms/${roomId}/messages`, { token: cast.outsideModerator.token }),
        takeOver(roomId, { token: cast.outsideModerator.token }),
      ]);

      // Assess
      expect([history.status, history.body.error.code]).toEqual([403, 'not_a_member']);
      expect({ status: taken.status, body: taken.body }).toEqual({
        status: 403,
        body: { error: { code: 'not_a_member', message: expect.any(String), traceId: expect.any(String) } },
      });
      expect((await handoffOf(roomId, { apiKey: cast.project.apiKey })).body).toEqual({ state: 'none' });
    });

    it("gets 403 not_a_member on GET and PATCH of a colleague's handoff, which stays active", async () => {
      // Prepare
      const started = await takeOver(roomId, { token: cast.moderator.token });
      expect(started.status).toBe(201);

      // Act
      const read = await handoffOf(roomId, { token: cast.outsideModerator.token });
      const completed = await complete(roomId, { token: cast.outsideModerator.token }, { disposition: 'resolved' });

      // Assess
      for (const refused of [read, completed]) {
        expect({ status: refused.status, body: refused.body }).toEqual({
          status: 403,
          body: { error: { code: 'not_a_member', message: expect.any(String), traceId: expect.any(String) } },
        });
      }
      expect((await handoffOf(roomId, { apiKey: cast.project.apiKey })).body).toMatchObject({
        state: 'human_active',
        handoffId: started.body.handoffId,
      });
    });

    it('takes over a public room all the same, which anyone of the project may read', async () => {
      // Prepare
      const publicRoomId = uniqueId('public');
      await api('/rooms', { token: cast.owner.token, body: { id: publicRoomId, type: 'public' } });

      // Act
      const taken = await takeOver(publicRoomId, { token: cast.outsideModerator.token });
      const completed = await complete(publicRoomId, { token: cast.outsideModerator.token }, { disposition: 'resolved' });

      // Assess
      expect([taken.status, completed.status]).toEqual([201, 200]);
    });
  });

  describe.each<{ role: string; who: () => Credentials; userId: () => string }>([
    { role: 'admin', who: () => ({ token: cast.admin.token }), userId: () => cast.admin.userId },
    { role: 'project owner', who: () => ({ token: cast.projectOwner.token }), userId: () => cast.projectOwner.userId },
    { role: 'API key', who: () => ({ apiKey: cast.project.apiKey }), userId: () => 'service' },
  ])('$role', ({ who, userId }) => {
    it('takes over and completes a room it is not a member of', async () => {
      // Prepare
      const roomId = await newRoom(cast);

      // Act
      const taken = await takeOver(roomId, who());
      const completed = await complete(roomId, who(), { disposition: 'resolved' });

      // Assess
      expect([taken.status, completed.status]).toEqual([201, 200]);
      expect(taken.body.takenBy).toBe(userId());
      expect(completed.body.completedBy).toBe(userId());
    });
  });

  describe.each([
    { role: 'member', who: () => cast.member },
    { role: 'guest', who: () => cast.guest },
    { role: "room's owner (a plain project member)", who: () => cast.owner },
  ])('$role', ({ who }) => {
    it('gets 403 on POST and PATCH, and changes nothing', async () => {
      // Prepare
      const roomId = await newRoom(cast);
      const idle = await takeOver(roomId, { token: who().token });
      const started = await takeOver(roomId, { token: cast.moderator.token });

      // Act
      const completed = await complete(roomId, { token: who().token }, { disposition: 'resolved' });

      // Assess
      expect([idle.status, started.status, completed.status]).toEqual([403, 201, 403]);
      expect((await handoffOf(roomId, { token: cast.moderator.token })).body).toMatchObject({
        state: 'human_active',
        handoffId: started.body.handoffId,
      });
    });
  });

  describe('reading the handoff', () => {
    let roomId: string;
    let taken: ApiResponse;
    let completedRoomId: string;
    let completed: ApiResponse;
    beforeAll(async () => {
      [roomId, completedRoomId] = await Promise.all([newRoom(cast), newRoom(cast)]);
      await api('/messages', { token: cast.member.token, body: { roomId, content: 'my card ends in 4242' } });
      [taken] = await Promise.all([
        takeOver(roomId, { token: cast.moderator.token }, { note: 'customer is upset, offer a voucher' }),
        takeOver(completedRoomId, { token: cast.moderator.token }, { note: 'check the invoice' }),
      ]);
      completed = await complete(completedRoomId, { token: cast.moderator.token }, { disposition: 'resolved', note: 'voucher sent' });
    });

    it.each([
      { reader: 'a member', who: () => ({ token: cast.member.token }) },
      { reader: "the room's owner (a plain project member)", who: () => ({ token: cast.owner.token }) },
    ])("shows $reader the frame's fields only, active and completed", async ({ who }) => {
      // Act
      const [active, done] = await Promise.all([handoffOf(roomId, who()), handoffOf(completedRoomId, who())]);

      // Assess
      expect(active.status).toBe(200);
      expect(active.body).toEqual(memberView(taken.body));
      expect(done.status).toBe(200);
      expect(done.body).toEqual(memberView(completed.body));
      expect(done.body).toMatchObject({ state: 'completed', disposition: 'resolved' });
      for (const secret of ['voucher', 'invoice', '4242']) expect(JSON.stringify([active.body, done.body])).not.toContain(secret);
    });

    it.each([
      { reader: 'a moderator of the room', who: () => ({ token: cast.moderator.token }) },
      { reader: 'an admin outside the room', who: () => ({ token: cast.admin.token }) },
      { reader: 'the project owner', who: () => ({ token: cast.projectOwner.token }) },
      { reader: 'the API key', who: () => ({ apiKey: cast.project.apiKey }) },
    ])('shows $reader the whole record, notes and context summary included', async ({ who }) => {
      // Act
      const [active, done] = await Promise.all([handoffOf(roomId, who()), handoffOf(completedRoomId, who())]);

      // Assess
      expect(active.status).toBe(200);
      expect(active.body).toEqual(taken.body);
      expect(active.body.note).toBe('customer is upset, offer a voucher');
      if (!aiConfigured()) expect(active.body.contextSummary).toContain('my card ends in 4242');
      expect(done.status).toBe(200);
      expect(done.body).toEqual(completed.body);
      expect(done.body).toMatchObject({ note: 'check the invoice', completionNote: 'voucher sent' });
    });

    it.each([
      { reader: 'a non-member', who: () => cast.outsider, code: 'not_a_member' },
      { reader: 'a moderator outside the room', who: () => cast.outsideModerator, code: 'not_a_member' },
      { reader: 'a guest of the room', who: () => cast.guest, code: 'forbidden' },
    ])('is refused to $reader with 403', async ({ who, code }) => {
      // Act
      const read = await handoffOf(roomId, { token: who().token });

      // Assess
      expect(read.status).toBe(403);
      expect(read.body.error.code).toBe(code);
    });
  });

  it('lists tasks for moderators only', async () => {
    // Act
    const [member, moderator] = await Promise.all([
      api('/agent-queue/tasks', { token: cast.member.token }),
      api('/agent-queue/tasks?status=resolved&limit=1', { token: cast.moderator.token }),
    ]);

    // Assess
    expect(member.status).toBe(403);
    expect(moderator.status).toBe(200);
    expect(moderator.body.tasks.length).toBeLessThanOrEqual(1);
    expect((await api('/agent-queue/tasks?status=open', { token: cast.moderator.token })).status).toBe(400);
  });
});

describe('disposition codes', () => {
  it('lists the defaults, built in, to any user of the project', async () => {
    // Prepare
    const fresh = await createTestProject('handoff-codes');
    const guest = await newUser(fresh, 'guest', ['guest']);

    // Act
    const listed = await api('/agent-queue/dispositions', { token: guest.token });

    // Assess
    expect(listed.status).toBe(200);
    expect(listed.body.dispositions).toEqual(DEFAULT_CODES.map((code) => ({ code, label: expect.any(String), builtIn: true })));
  });

  it("adds the project's own codes, which a completion then accepts, and keeps them from other projects", async () => {
    // Prepare
    const codes = await createTestProject('handoff-own-codes');
    const admin = await newUser(codes, 'admin', ['admin']);
    const owner = await newUser(codes, 'owner');
    const roomId = uniqueId('room');
    await api('/rooms', { token: owner.token, body: { id: roomId, type: 'group' } });

    // Act
    const set = await api('/admin/agent-queue/dispositions', {
      token: admin.token,
      method: 'PUT',
      body: {
        dispositions: [
          { code: 'refund_issued', label: 'Refund issued' },
          { code: 'vip_callback', label: 'VIP callback' },
        ],
      },
    });
    const listed = await api('/agent-queue/dispositions', { token: owner.token });
    await takeOver(roomId, { apiKey: codes.apiKey });
    const completed = await complete(roomId, { apiKey: codes.apiKey }, { disposition: 'vip_callback' });
    const elsewhere = await api('/agent-queue/dispositions', { apiKey: other.project.apiKey });

    // Assess
    expect(set.status).toBe(200);
    expect(codesOf(set)).toEqual([...DEFAULT_CODES, 'refund_issued', 'vip_callback']);
    expect(listed.body.dispositions.slice(-2)).toEqual([
      { code: 'refund_issued', label: 'Refund issued', builtIn: false },
      { code: 'vip_callback', label: 'VIP callback', builtIn: false },
    ]);
    expect(completed.status).toBe(200);
    expect(completed.body.disposition).toBe('vip_callback');
    expect(codesOf(elsewhere)).toEqual(DEFAULT_CODES);
  });

  it('replaces the list as a whole', async () => {
    // Prepare
    const codes = await createTestProject('handoff-replace-codes');
    const put = (dispositions: unknown[]) =>
      api('/admin/agent-queue/dispositions', { apiKey: codes.apiKey, method: 'PUT', body: { dispositions } });
    await put([{ code: 'first_code', label: 'First' }]);

    // Act
    const replaced = await put([{ code: 'second_code', label: 'Second' }]);
    const cleared = await put([]);

    // Assess
    expect(codesOf(replaced)).toEqual([...DEFAULT_CODES, 'second_code']);
    expect(codesOf(cleared)).toEqual(DEFAULT_CODES);
  });

  it.each([
    { case: 'a default redefined', dispositions: [{ code: 'spam', label: 'Not spam' }] },
    {
      case: 'a code twice',
      dispositions: [
        { code: 'twice', label: 'A' },
        { code: 'twice', label: 'B' },
      ],
    },
    { case: 'an uppercase code', dispositions: [{ code: 'Refund', label: 'Refund' }] },
    { case: 'a one-letter code', dispositions: [{ code: 'r', label: 'R' }] },
    { case: 'a label of 81 characters', dispositions: [{ code: 'long_label', label: 'x'.repeat(81) }] },
    { case: '51 codes', dispositions: Array.from({ length: 51 }, (_, index) => ({ code: `code_${index}`, label: 'C' })) },
  ])('refuses $case with 400 and keeps the list', async ({ dispositions }) => {
    // Act
    const refused = await api('/admin/agent-queue/dispositions', { apiKey: other.project.apiKey, method: 'PUT', body: { dispositions } });

    // Assess
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('validation_failed');
    expect(codesOf(await api('/agent-queue/dispositions', { apiKey: other.project.apiKey }))).toEqual(DEFAULT_CODES);
  });

  it('lets only admins replace the list', async () => {
    // Act
    const refused = await api('/admin/agent-queue/dispositions', {
      token: cast.moderator.token,
      method: 'PUT',
      body: { dispositions: [{ code: 'mod_code', label: 'Mod' }] },
    });

    // Assess
    expect(refused.status).toBe(403);
  });
});

describe('tenant isolation', () => {
  let roomId: string;
  let taken: ApiResponse;

  beforeAll(async () => {
    roomId = await newRoom(cast);
    taken = await takeOver(roomId, { token: cast.moderator.token });
  });

  it.each([
    { as: 'API key', who: () => ({ apiKey: other.project.apiKey }) },
    { as: 'moderator', who: () => ({ token: other.moderator.token }) },
  ])("project B's $as cannot read, take over or complete A's room", async ({ who }) => {
    // Act
    const responses = await Promise.all([
      handoffOf(roomId, who()),
      takeOver(roomId, who()),
      complete(roomId, who(), { disposition: 'resolved' }),
    ]);

    // Assess
    expect(responses.map((response) => [response.status, response.body.error?.code])).toEqual([
      [404, 'room_not_found'],
      [404, 'room_not_found'],
      [404, 'room_not_found'],
    ]);
    expect((await handoffOf(roomId, { apiKey: cast.project.apiKey })).body).toMatchObject({
      state: 'human_active',
      handoffId: taken.body.handoffId,
    });
  });

  it("keeps a room of the same id in project B apart, and B's queue free of A's tasks", async () => {
    // Prepare
    await api('/rooms', { token: other.owner.token, body: { id: roomId, type: 'group' } });

    // Act
    const [read, tasks] = await Promise.all([handoffOf(roomId, { apiKey: other.project.apiKey }), tasksOf(other, 'claimed')]);

    // Assess
    expect(read.body).toEqual({ state: 'none' });
    expect(tasks.map((task) => task.roomId)).not.toContain(roomId);
    expect(tasks.map((task) => task.taskId)).not.toContain(taken.body.agent_task_id);
  });
});
