import { randomBytes } from 'node:crypto';
import { beforeAll, expect } from 'vitest';
import { createAgent, dispositionCode, postThread, seedRoomSummary } from '../../support/ai/fixtures';
import { api } from '../../support/api';
import {
  callerTable,
  describeRoleMatrix,
  EVERY_CALLER,
  NO_API_KEY,
  NOT_A_MEMBER,
  roleMatrixBeforeAll,
} from '../../support/matrices/role-driver';

/** Who may use and run the AI routes (summaries, suggestions, agents, handoffs, dispositions), by project role and in rooms; the matrix is `role-driver.ts`. */

const roles = roleMatrixBeforeAll('roles-ai');
const { project, tokens, newRoomByKey, roomOfEveryRole, historyOf } = roles;
const agentsOf = async () => (await api('/agents', { apiKey: project.apiKey })).body.agents as any[];
const handoffStateOf = async (roomId: string) => (await api(`/rooms/${roomId}/handoff`, { apiKey: project.apiKey })).body.state as string;
const dispositionCodes = async () =>
  ((await api('/agent-queue/dispositions', { apiKey: project.apiKey })).body.dispositions as any[]).map((entry) => entry.code);
/** The agent the InvokeAgent room rule makes answer. */
let agent: Awaited<ReturnType<typeof createAgent>>;

beforeAll(async () => {
  agent = await createAgent({ apiKey: project.apiKey }, { name: 'Room rules' });
});

/** Room readers with a user JWT: members and project admins; guests are below the minimum role and the route takes no API key. */
const roomReaders = (success: number) =>
  callerTable({
    callers: EVERY_CALLER,
    allowed: ['member', 'roomOwner', 'moderator', 'admin', 'owner'],
    success,
    except: { outsider: NOT_A_MEMBER, apiKey: NO_API_KEY },
  });

describeRoleMatrix('Ai', roles, {
  minRole: {
    SummarizeThread: {
      minRole: 'member',
      success: 200,
      async act(auth) {
        const roomId = await roomOfEveryRole();
        const { rootId } = await postThread(project.projectId, { token: tokens.member }, roomId);
        return api(`/messages/${rootId}/summary`, { ...auth, body: { roomId } });
      },
    },
    SuggestReplies: {
      minRole: 'member',
      success: 200,
      async act(auth) {
        const roomId = await roomOfEveryRole();
        await api('/messages', { token: tokens.member, body: { roomId, content: 'Can someone review my change?' } });
        return api('/messages/suggest-replies', { ...auth, body: { roomId } });
      },
    },
    InvokeAgent: {
      minRole: 'member',
      success: 201,
      async act(auth) {
        const roomId = await roomOfEveryRole();
        const agent = await createAgent({ apiKey: project.apiKey }, { name: 'Role check' });
        const response = await api(`/agents/${agent.id}/invoke`, { ...auth, body: { roomId, prompt: 'Say hello' } });
        return {
          ...response,
          check: async (allowed) =>
            expect((await historyOf(roomId)).filter((message) => message.userId === agent.userId)).toHaveLength(allowed ? 1 : 0),
        };
      },
    },
    GetAiUsage: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const response = await api('/admin/ai/usage', auth);
        return {
          ...response,
          check: async (allowed) => {
            if (allowed)
              expect(response.body).toEqual({
                month: expect.stringMatching(/^\d{4}-\d{2}$/),
                used: expect.any(Number),
                quota: expect.any(Number),
                remaining: expect.any(Number),
              });
          },
        };
      },
    },
    CreateAgent: {
      minRole: 'admin',
      success: 201,
      async act(auth) {
        const handle = `role-${randomBytes(5).toString('hex')}`;
        const response = await api('/agents', { ...auth, body: { handle, name: 'Role check', instructions: 'Answer briefly.' } });
        return { ...response, check: async (allowed) => expect((await agentsOf()).some((agent) => agent.handle === handle)).toBe(allowed) };
      },
    },
    UpdateAgent: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const agent = await createAgent({ apiKey: project.apiKey }, { name: 'Before' });
        const response = await api(`/agents/${agent.id}`, { ...auth, method: 'PATCH', body: { name: 'After' } });
        return {
          ...response,
          check: async (allowed) =>
            expect((await agentsOf()).find((listed) => listed.id === agent.id)?.name).toBe(allowed ? 'After' : 'Before'),
        };
      },
    },
    DeleteAgent: {
      minRole: 'admin',
      success: 204,
      async act(auth) {
        const agent = await createAgent({ apiKey: project.apiKey });
        const response = await api(`/agents/${agent.id}`, { ...auth, method: 'DELETE' });
        return {
          ...response,
          check: async (allowed) => expect((await agentsOf()).some((listed) => listed.id === agent.id)).toBe(!allowed),
        };
      },
    },
    StartRoomHandoff: {
      minRole: 'moderator',
      success: 201,
      async act(auth) {
        // Public: a moderator may read it without a membership, as its history.
        const roomId = await newRoomByKey('public');
        const response = await api(`/rooms/${roomId}/handoff`, { ...auth, method: 'POST', body: { note: 'role check' } });
        return { ...response, check: async (allowed) => expect(await handoffStateOf(roomId)).toBe(allowed ? 'human_active' : 'none') };
      },
    },
    CompleteRoomHandoff: {
      minRole: 'moderator',
      success: 200,
      async act(auth) {
        // Public: a moderator may read it without a membership, as its history.
        const roomId = await newRoomByKey('public');
        await api(`/rooms/${roomId}/handoff`, { apiKey: project.apiKey, method: 'POST', body: {} });
        const response = await api(`/rooms/${roomId}/handoff`, { ...auth, method: 'PATCH', body: { disposition: 'resolved' } });
        return { ...response, check: async (allowed) => expect(await handoffStateOf(roomId)).toBe(allowed ? 'completed' : 'human_active') };
      },
    },
    SetDispositions: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const code = dispositionCode('role');
        const response = await api('/admin/agent-queue/dispositions', {
          ...auth,
          method: 'PUT',
          body: { dispositions: [{ code, label: 'Role check' }] },
        });
        return { ...response, check: async (allowed) => expect((await dispositionCodes()).includes(code)).toBe(allowed) };
      },
    },
    ListAgentTasks: {
      minRole: 'moderator',
      success: 200,
      async act(auth) {
        const response = await api('/agent-queue/tasks?status=claimed', auth);
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(response.body).toEqual({ tasks: expect.any(Array) });
          },
        };
      },
    },
  },
  roomRules: [
    {
      route: 'SummarizeThread',
      rule: 'room readers with a user JWT (members and project admins; guests are below its minimum role); the route takes no API key',
      expected: roomReaders(200),
      act: async (auth, { roomId }) => {
        const { rootId } = await postThread(project.projectId, { token: tokens.roomOwner }, roomId);
        return api(`/messages/${rootId}/summary`, { ...auth, body: { roomId } });
      },
      // A summary is an answer, never a message of the room.
      check: async ({ roomId }) => expect(await historyOf(roomId)).toHaveLength(3),
    },
    {
      route: 'SuggestReplies',
      rule: 'room readers with a user JWT (members and project admins; guests are below its minimum role); the route takes no API key',
      expected: roomReaders(200),
      act: async (auth, { roomId }) => {
        await api('/messages', { token: tokens.roomOwner, body: { roomId, content: 'Can someone review my change?' } });
        return api('/messages/suggest-replies', { ...auth, body: { roomId } });
      },
      check: async ({ roomId }) => expect(await historyOf(roomId)).toHaveLength(1),
    },
    {
      route: 'ListRoomSummaries',
      rule: 'room readers (members, guests, project admins) or API key',
      expected: callerTable({ callers: EVERY_CALLER, allowed: EVERY_CALLER, success: 200, except: { outsider: NOT_A_MEMBER } }),
      act: async (auth, { roomId }) => {
        await seedRoomSummary(project.projectId, roomId);
        return api(`/rooms/${roomId}/summaries`, auth);
      },
      check: async () => undefined,
    },
    {
      route: 'InvokeAgent',
      rule: 'whoever may post in the room, with a user JWT (members and project admins; guests are below its minimum role); the route takes no API key',
      expected: roomReaders(201),
      act: (auth, { roomId }) => api(`/agents/${agent.id}/invoke`, { ...auth, body: { roomId, prompt: 'Say hello' } }),
      check: async ({ roomId }, allowed) =>
        expect((await historyOf(roomId)).filter((message) => message.userId === agent.userId)).toHaveLength(allowed ? 1 : 0),
    },
    {
      route: 'GetRoomHandoff',
      rule: 'room owner and members, project moderators and above, API key; room guests and non-members refused',
      expected: callerTable({
        callers: EVERY_CALLER,
        allowed: ['member', 'roomOwner', 'moderator', 'admin', 'owner', 'apiKey'],
        success: 200,
        except: { outsider: NOT_A_MEMBER },
      }),
      act: (auth, { roomId }) => api(`/rooms/${roomId}/handoff`, auth),
      check: async () => undefined,
    },
  ],
  projectReads: [
    {
      route: 'ListAgents',
      async act(auth) {
        const agent = await createAgent({ apiKey: project.apiKey }, { name: 'Listed' });
        const response = await api('/agents', auth);
        return { ...response, check: async () => expect(response.body.agents.map((listed: any) => listed.id)).toContain(agent.id) };
      },
    },
    {
      route: 'ListDispositions',
      async act(auth) {
        const response = await api('/agent-queue/dispositions', auth);
        return {
          ...response,
          check: async () =>
            expect(response.body.dispositions.filter((entry: any) => entry.builtIn).map((entry: any) => entry.code)).toEqual([
              'resolved',
              'escalated',
              'follow_up',
              'no_response',
              'spam',
            ]),
        };
      },
    },
  ],
});
