import { afterAll, beforeAll, expect } from 'vitest';
import { agentHandle, createAgent, operatorHeaders, postThread, seedRoomSummary, setAiQuota } from '../../support/ai/fixtures';
import { api, uniqueId } from '../../support/api';
import { describeTenantMatrix, expectAllNotFound, tenantsBeforeAll } from '../../support/matrices/tenant-driver';

/** Project A against project B on the AI area's routes (summaries, suggestions, agents, handoffs, dispositions, quotas); the matrix is `tenant-driver.ts`. */

const tenants = tenantsBeforeAll();

/**
 * B's AI data, all in a room of its own (so the rooms above keep their exact history): a thread of
 * three messages, a room summary, an agent, an active handoff with its claimed task, a disposition
 * code of B's own and a monthly AI quota of B's own (cleared after the file).
 */
let bAiRoomId: string;
let bThread: { rootId: number; replyIds: number[] };
let bSummary: Awaited<ReturnType<typeof seedRoomSummary>>;
let bAgent: Awaited<ReturnType<typeof createAgent>>;
let bHandoff: any;
let bAiHistory: any[];
const B_AGENT_INSTRUCTIONS = 'b-secret-instructions: never mention the merger';
const B_HANDOFF_NOTE = 'b-secret-handoff-note';
const B_SUMMARY = '- b-secret-summary of the room';
const B_DISPOSITION = { code: 'b_secret_code', label: 'B secret label' };
const B_AI_QUOTA = 4321;

beforeAll(async () => {
  const { b, bMember } = tenants();
  bAiRoomId = uniqueId('b-ai-room');
  await api('/rooms', { token: bMember, body: { id: bAiRoomId, type: 'group', name: 'B AI room', members: ['b-friend'] } });
  bThread = await postThread(b.projectId, { token: bMember }, bAiRoomId);
  [bSummary, bAgent] = await Promise.all([
    seedRoomSummary(b.projectId, bAiRoomId, { summary: B_SUMMARY }),
    createAgent({ apiKey: b.apiKey }, { name: 'B agent', instructions: B_AGENT_INSTRUCTIONS }),
    api('/admin/agent-queue/dispositions', { method: 'PUT', apiKey: b.apiKey, body: { dispositions: [B_DISPOSITION] } }),
    setAiQuota(b.projectId, B_AI_QUOTA),
  ]);
  bHandoff = (await api(`/rooms/${bAiRoomId}/handoff`, { method: 'POST', apiKey: b.apiKey, body: { note: B_HANDOFF_NOTE } })).body;
  bAiHistory = (await api(`/rooms/${bAiRoomId}/messages`, { apiKey: b.apiKey })).body.messages;
});

afterAll(async () => {
  // Both projects back on the runtime's default quota (the AI quota cases set A's too).
  const { a, b } = tenants();
  await Promise.all([a, b].map((project) => setAiQuota(project.projectId, null)));
});

/** B's AI data as B reads it, to show A's attempts changed nothing. */
const bAgents = async () => (await api('/agents', { apiKey: tenants().b.apiKey })).body.agents as any[];
const bHandoffNow = async () => (await api(`/rooms/${bAiRoomId}/handoff`, { apiKey: tenants().b.apiKey })).body;
const bTasks = async (status: 'claimed' | 'resolved') =>
  (await api(`/agent-queue/tasks?status=${status}&limit=100`, { apiKey: tenants().b.apiKey })).body.tasks as any[];
const bDispositions = async () => (await api('/agent-queue/dispositions', { apiKey: tenants().b.apiKey })).body.dispositions as any[];
const usageOf = async (apiKey: string) => (await api('/admin/ai/usage', { apiKey })).body;
/** Every room of B, the AI room included. */
const bAllRooms = () => [...tenants().bRooms(), bAiRoomId];

describeTenantMatrix('Ai', tenants, {
  async SummarizeThread({ aMember, bMember, bRoomId, bMessage, aRoomId, aUsers, bHistory }) {
    // Act + Assess: A's users of the shared id (one rate-limit budget in A) name B's rooms and messages
    await expectAllNotFound(
      aUsers().flatMap(({ who, token }) => [
        {
          label: `${who} B's thread in B's room`,
          call: () => api(`/messages/${bThread.rootId}/summary`, { token, body: { roomId: bAiRoomId } }),
        },
        {
          label: `${who} B's message in B's room`,
          call: () => api(`/messages/${bMessage.id}/summary`, { token, body: { roomId: bRoomId } }),
        },
      ]),
    );
    await expectAllNotFound(
      aUsers().flatMap(({ who, token }) =>
        [bThread.rootId, bThread.replyIds[0] as number].map((messageId) => ({
          label: `${who} B's message ${messageId} in A's room`,
          call: () => api(`/messages/${messageId}/summary`, { token, body: { roomId: aRoomId } }),
        })),
      ),
      'message_not_found',
    );
    // A's user of the shared id spends the rest of its budget in A, up to a 429
    let spent: number | undefined;
    for (let call = 0; call < 15 && spent !== 429; call++) {
      spent = (await api(`/messages/${bThread.rootId}/summary`, { token: aMember, body: { roomId: aRoomId } })).status;
    }
    expect(spent).toBe(429);

    // Assess: B's user of the same id still summarizes B's thread (its budget is B's), which is as it was
    const byB = await api(`/messages/${bThread.replyIds[1]}/summary`, { token: bMember, body: { roomId: bAiRoomId } });
    expect({ status: byB.status, body: byB.body }).toEqual({
      status: 200,
      body: { summary: expect.stringMatching(/^- /), rootMessageId: bThread.rootId, messageCount: 3, truncated: false },
    });
    expect(await bHistory(bAiRoomId)).toEqual(bAiHistory);
  },

  async SuggestReplies({ a, bMessage, aRoomId, aUsers, bHistory }) {
    // Prepare
    const before = await bHistory();

    // Act + Assess: B's rooms do not exist for A; B's message ids are not in A's room
    await expectAllNotFound(
      aUsers().flatMap(({ who, token }) =>
        bAllRooms().map((roomId) => ({
          label: `${who} ${roomId}`,
          call: () => api('/messages/suggest-replies', { token, body: { roomId } }),
        })),
      ),
    );
    await expectAllNotFound(
      aUsers().flatMap(({ who, token }) =>
        [bMessage.id, bThread.rootId].map((messageId) => ({
          label: `${who} B's message ${messageId} in A's room`,
          call: () => api('/messages/suggest-replies', { token, body: { roomId: aRoomId, messageId } }),
        })),
      ),
      'message_not_found',
    );
    const byKey = await api('/messages/suggest-replies', { apiKey: a.apiKey, body: { roomId: aRoomId } });
    expect(byKey).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
    expect(await bHistory()).toEqual(before);
    expect(await bHistory(bAiRoomId)).toEqual(bAiHistory);
  },

  async ListRoomSummaries({ b, aMember, aRoomId, aCallers }) {
    // Act
    const own = await Promise.all(aCallers().map(({ auth }) => api(`/rooms/${aRoomId}/summaries?limit=100`, auth)));

    // Assess
    await expectAllNotFound(
      [...aCallers(), { who: 'member JWT', auth: { token: aMember } }].flatMap(({ who, auth }) =>
        bAllRooms().map((roomId) => ({ label: `${who} ${roomId}`, call: () => api(`/rooms/${roomId}/summaries`, auth) })),
      ),
    );
    for (const list of own) expect({ status: list.status, body: list.body }).toEqual({ status: 200, body: { summaries: [] } });
    expect((await api(`/rooms/${bAiRoomId}/summaries`, { apiKey: b.apiKey })).body.summaries).toEqual([bSummary]);
  },

  async GetAiUsage({ b, aCallers }) {
    // Act
    const reads = await Promise.all(aCallers().map(({ auth }) => api('/admin/ai/usage', auth)));

    // Assess: A's month and quota, never B's own quota or count
    const bUsage = await usageOf(b.apiKey);
    for (const read of reads) {
      expect(read.status).toBe(200);
      expect(read.body).toEqual({
        month: bUsage.month,
        used: expect.any(Number),
        quota: expect.any(Number),
        remaining: expect.any(Number),
      });
      expect(read.body.quota).not.toBe(B_AI_QUOTA);
    }
    expect(bUsage).toMatchObject({ quota: B_AI_QUOTA, remaining: B_AI_QUOTA - bUsage.used });
    expect(bUsage.used).toBeGreaterThan(0);
  },

  async SetProjectAiQuota({ a, b, aCallers }) {
    // Act: A's strongest callers name B's project (and A's own); only the operator key sets a quota
    const attempts = await Promise.all(
      aCallers().flatMap(({ auth }) =>
        [b.projectId, a.projectId].map((projectId) =>
          api(`/platform/projects/${projectId}/ai-quota`, { ...auth, method: 'PUT', body: { monthlyInvocations: 0 } }),
        ),
      ),
    );
    const aByOperator = await api(`/platform/projects/${a.projectId}/ai-quota`, {
      method: 'PUT',
      headers: operatorHeaders(),
      body: { monthlyInvocations: 1234 },
    });

    // Assess: B keeps its own quota; A's is A's
    for (const attempt of attempts) expect(attempt).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
    expect({ status: aByOperator.status, quota: aByOperator.body.quota }).toEqual({ status: 200, quota: 1234 });
    expect((await usageOf(b.apiKey)).quota).toBe(B_AI_QUOTA);
    expect((await usageOf(a.apiKey)).quota).toBe(1234);
    await setAiQuota(a.projectId, null);
  },

  async CreateAgent({ a, b, aAdmin }) {
    // Act: B's handle is B's; A may have an agent of that handle, its own
    const sameHandle = await api('/agents', {
      apiKey: a.apiKey,
      body: { handle: bAgent.handle, name: 'A copy', instructions: 'A instructions' },
    });
    const smuggled = await api('/agents', {
      token: aAdmin,
      body: { handle: agentHandle(), name: 'x', instructions: 'y', projectId: b.projectId },
    });

    // Assess
    expect(sameHandle.status).toBe(201);
    expect(sameHandle.body).toMatchObject({ handle: bAgent.handle, userId: bAgent.userId, name: 'A copy' });
    expect(sameHandle.body.id).not.toBe(bAgent.id);
    expect(smuggled).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    expect(await bAgents()).toEqual([bAgent]);
  },

  async ListAgents({ aMember, aCallers }) {
    // Act
    const lists = await Promise.all(
      [...aCallers(), { who: 'member JWT', auth: { token: aMember } }].map(({ auth }) => api('/agents', auth)),
    );

    // Assess
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(list.body.agents.map((agent: any) => agent.id)).not.toContain(bAgent.id);
      expect(JSON.stringify(list.body)).not.toContain(B_AGENT_INSTRUCTIONS);
    }
    expect(await bAgents()).toEqual([bAgent]);
  },

  async UpdateAgent({ aCallers }) {
    // Act + Assess
    await expectAllNotFound(
      aCallers().map(({ who, auth }) => ({
        label: who,
        call: () => api(`/agents/${bAgent.id}`, { ...auth, method: 'PATCH', body: { name: 'defaced', instructions: 'leak everything' } }),
      })),
      'agent_not_found',
    );
    expect(await bAgents()).toEqual([bAgent]);
  },

  async DeleteAgent({ aCallers }) {
    // Act + Assess
    await expectAllNotFound(
      aCallers().map(({ who, auth }) => ({ label: who, call: () => api(`/agents/${bAgent.id}`, { ...auth, method: 'DELETE' }) })),
      'agent_not_found',
    );
    expect(await bAgents()).toEqual([bAgent]);
  },

  async InvokeAgent({ a, aRoomId, aUsers, bHistory, bMembers }) {
    // Prepare: an agent of A's own, to name B's rooms with
    const aAgent = await createAgent({ apiKey: a.apiKey });
    const [historyBefore, membersBefore] = await Promise.all([bHistory(), bMembers(bAiRoomId)]);

    // Act + Assess: B's agent is unknown in A; B's rooms do not exist for A's agent
    await expectAllNotFound(
      aUsers().map(({ who, token }) => ({
        label: `${who} B's agent`,
        call: () => api(`/agents/${bAgent.id}/invoke`, { token, body: { roomId: aRoomId, prompt: 'hello' } }),
      })),
      'agent_not_found',
    );
    await expectAllNotFound(
      aUsers().flatMap(({ who, token }) =>
        bAllRooms().map((roomId) => ({
          label: `${who} ${roomId}`,
          call: () => api(`/agents/${aAgent.id}/invoke`, { token, body: { roomId, prompt: 'hello' } }),
        })),
      ),
    );
    const byKey = await api(`/agents/${bAgent.id}/invoke`, { apiKey: a.apiKey, body: { roomId: bAiRoomId } });
    expect(byKey).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
    expect(await bHistory()).toEqual(historyBefore);
    expect(await bHistory(bAiRoomId)).toEqual(bAiHistory);
    expect(await bMembers(bAiRoomId)).toEqual(membersBefore);
  },

  async GetRoomHandoff({ aMember, aCallers }) {
    // Act + Assess
    await expectAllNotFound(
      [...aCallers(), { who: 'member JWT', auth: { token: aMember } }].flatMap(({ who, auth }) =>
        bAllRooms().map((roomId) => ({ label: `${who} ${roomId}`, call: () => api(`/rooms/${roomId}/handoff`, auth) })),
      ),
    );
    expect(await bHandoffNow()).toEqual(bHandoff);
  },

  async StartRoomHandoff({ b, bRoomId, aCallers }) {
    // Prepare
    const claimed = await bTasks('claimed');

    // Act + Assess
    await expectAllNotFound(
      aCallers().flatMap(({ who, auth }) =>
        bAllRooms().map((roomId) => ({
          label: `${who} ${roomId}`,
          call: () => api(`/rooms/${roomId}/handoff`, { ...auth, method: 'POST', body: { note: 'a takeover' } }),
        })),
      ),
    );
    expect(await bHandoffNow()).toEqual(bHandoff);
    expect((await api(`/rooms/${bRoomId}/handoff`, { apiKey: b.apiKey })).body).toEqual({ state: 'none' });
    expect(await bTasks('claimed')).toEqual(claimed);
  },

  async CompleteRoomHandoff({ aCallers }) {
    // Act + Assess: B's active handoff, and B's rooms without one, do not exist for A
    await expectAllNotFound(
      aCallers().flatMap(({ who, auth }) =>
        bAllRooms().map((roomId) => ({
          label: `${who} ${roomId}`,
          call: () => api(`/rooms/${roomId}/handoff`, { ...auth, method: 'PATCH', body: { disposition: 'resolved', note: 'closed by A' } }),
        })),
      ),
    );
    expect(await bHandoffNow()).toEqual(bHandoff);
    expect((await bTasks('claimed')).map((task) => task.taskId)).toContain(bHandoff.agent_task_id);
    expect((await bTasks('resolved')).map((task) => task.taskId)).not.toContain(bHandoff.agent_task_id);
  },

  async ListDispositions({ aMember, aCallers }) {
    // Act
    const lists = await Promise.all(
      [...aCallers(), { who: 'member JWT', auth: { token: aMember } }].map(({ auth }) => api('/agent-queue/dispositions', auth)),
    );

    // Assess
    for (const list of lists) {
      expect(list.status).toBe(200);
      expect(list.body.dispositions.map((entry: any) => entry.code)).not.toContain(B_DISPOSITION.code);
      expect(JSON.stringify(list.body)).not.toContain(B_DISPOSITION.label);
    }
    expect(await bDispositions()).toContainEqual({ ...B_DISPOSITION, builtIn: false });
  },

  async SetDispositions({ a, aCallers }) {
    // Prepare
    const before = await bDispositions();

    // Act: A replaces its own codes, B's code among them, and then none
    const sets = await Promise.all(
      aCallers().map(({ auth }) =>
        api('/admin/agent-queue/dispositions', {
          ...auth,
          method: 'PUT',
          body: {
            dispositions: [
              { code: B_DISPOSITION.code, label: 'A label' },
              { code: 'a_only_code', label: 'A only' },
            ],
          },
        }),
      ),
    );
    const cleared = await api('/admin/agent-queue/dispositions', { apiKey: a.apiKey, method: 'PUT', body: { dispositions: [] } });

    // Assess: B's list is as it was
    for (const set of sets) expect(set.status).toBe(200);
    expect(cleared.status).toBe(200);
    expect(await bDispositions()).toEqual(before);
    expect(before).toContainEqual({ ...B_DISPOSITION, builtIn: false });
  },

  async ListAgentTasks({ aCallers }) {
    // Act
    const lists = await Promise.all(
      aCallers().flatMap(({ auth }) => ['claimed', 'resolved'].map((status) => api(`/agent-queue/tasks?status=${status}&limit=100`, auth))),
    );

    // Assess: A has no handoffs, so any task listed would be another tenant's
    for (const list of lists) expect({ status: list.status, body: list.body }).toEqual({ status: 200, body: { tasks: [] } });
    expect((await bTasks('claimed')).map((task) => task.taskId)).toContain(bHandoff.agent_task_id);
  },
});
