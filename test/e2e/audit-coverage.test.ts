import { beforeAll, describe, expect, it } from 'vitest';
import { type HttpRoute, httpRoutes } from '#wiring';
import { isPrivilegedRoute } from '#wiring/audit';
import { agentBody, createAgent } from '../support/ai/fixtures';
import { type ApiResponse, api, createTestProject, newUser, runtime, type TestProject, uniqueId } from '../support/api';
import { bridgeBodies, createSlackBridge } from '../support/bridges';
import { seedFailedDelivery } from '../support/webhook-deliveries';

/**
 * Every privileged route of the wiring table (`isPrivilegedRoute`), driven once with a successful
 * request carrying its own `X-Trace-Id`, leaves exactly one audit event with that trace id: the
 * route's action, the caller as actor, the path parameters and named fields as target, and none
 * of the keys, secrets, passwords, tokens or message text sent or answered. A new privileged route
 * without a case here fails the first test; one without an `audit` entry fails its own.
 */

type Caller =
  | { readonly kind: 'service'; readonly apiKey: string }
  | { readonly kind: 'operator' }
  | { readonly kind: 'user'; readonly userId: string; readonly role: string; readonly token: string };

interface Drive {
  readonly path: string;
  readonly caller: Caller;
  readonly body?: unknown;
  /** The API key that reads the project the event is written into: the shared project's unless given. */
  readonly readWith?: (answer: ApiResponse) => string;
}

let project: TestProject;
let admin: Caller & { kind: 'user' };
let member: Caller & { kind: 'user' };
let roomId: string;

const service = (): Caller => ({ kind: 'service', apiKey: project.apiKey });
const operator: Caller = { kind: 'operator' };
const userOf = async (role: 'member' | 'moderator' | 'admin', prefix: string = role) => {
  const user = await newUser(project, prefix, [role]);
  return { kind: 'user' as const, userId: user.userId, role, token: user.token };
};
const newRoom = async () => {
  const id = uniqueId('audit-room');
  const created = await api('/rooms', { apiKey: project.apiKey, body: { id, type: 'group' } });
  expect(created.status).toBe(201);
  return id;
};
const expectStatus = (response: ApiResponse, status: number) => {
  expect(response.status, JSON.stringify(response.body)).toBe(status);
  return response.body;
};
/** Text no audit event may hold: every test sends some. */
const contentOf = (what: string) => `${what} text that must never reach the audit log ${uniqueId('c')}`;

/** How to drive each privileged route once to success, by route id (resources it needs made first). */
const cases: Record<string, () => Promise<Drive>> = {
  CreateProject: async () => ({
    path: '/platform/projects',
    caller: operator,
    body: { name: 'audit coverage', projectId: uniqueId('prj').toLowerCase() },
    readWith: (answer) => answer.body.apiKey,
  }),
  RotateProjectKeys: async () => {
    const rotated = await createTestProject('audit-rotated');
    return {
      path: `/platform/projects/${rotated.projectId}/rotate-keys`,
      caller: operator,
      body: { apiKey: true, signingSecret: true },
      readWith: (answer) => answer.body.apiKey,
    };
  },
  CreateToken: async () => ({
    path: '/auth/token',
    caller: service(),
    body: { userId: uniqueId('moderator'), roles: ['moderator'], expiresIn: 600 },
  }),
  SetUserCredentials: async () => ({
    path: `/users/${uniqueId('credentials')}/credentials`,
    caller: service(),
    body: { password: `a-password-${uniqueId('pw')}`, roles: ['member'] },
  }),
  RemoveRoomMember: async () => {
    const kicked = uniqueId('kicked');
    expectStatus(await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey, body: { userId: kicked } }), 201);
    return { path: `/rooms/${roomId}/members/${kicked}`, caller: admin };
  },
  ImportMessage: async () => ({
    path: '/admin/messages/import',
    caller: service(),
    body: { roomId, userId: 'legacy', content: contentOf('imported'), createdAt: '2021-01-01T00:00:00Z', clientMessageId: uniqueId('c') },
  }),
  ImportMessageBatch: async () => ({
    path: '/admin/messages/import/batch',
    caller: service(),
    body: { messages: [{ roomId, userId: 'legacy', content: contentOf('batch'), createdAt: '2021-01-01T00:00:00Z' }] },
  }),
  DecideReport: async () => {
    const sent = expectStatus(await api('/messages', { token: member.token, body: { roomId, content: contentOf('reported') } }), 201);
    const report = await api(`/messages/${sent.id}/reports`, { token: member.token, body: { roomId, reason: 'spam' } });
    return {
      path: `/admin/moderation/reports/${expectStatus(report, 201).id}`,
      caller: admin,
      body: { status: 'dismissed', note: contentOf('note') },
    };
  },
  ReplaceBlockList: async () => ({ path: '/admin/moderation/blocklist', caller: service(), body: { terms: ['audit-term'] } }),
  RegisterWebhook: async () => ({
    path: '/webhooks/register',
    caller: service(),
    body: {
      url: `https://example.com/hooks/${uniqueId('hook')}`,
      eventTypes: ['message.created'],
      secret: `whsec-${uniqueId('s')}-0123456789`,
    },
  }),
  DeleteWebhook: async () => {
    const registered = await api('/webhooks/register', {
      apiKey: project.apiKey,
      body: { url: `https://example.com/hooks/${uniqueId('hook')}`, eventTypes: ['message.created'] },
    });
    return { path: `/webhooks/${expectStatus(registered, 201).id}`, caller: service() };
  },
  ReplayWebhookDelivery: async () => {
    const deliveryId = `whd_${uniqueId('x').slice(2)}${'0'.repeat(22)}`;
    await seedFailedDelivery(project.projectId, deliveryId);
    return { path: `/admin/webhooks/deliveries/${deliveryId}/replay`, caller: service() };
  },
  PutPushConfig: async () => ({
    path: '/push/config',
    caller: service(),
    body: { environment: uniqueId('env'), fcmServerKey: `AAAA-legacy:${uniqueId('server-key')}`, webPushEnabled: true },
  }),
  SetProjectAiQuota: async () => ({
    path: `/platform/projects/${project.projectId}/ai-quota`,
    caller: operator,
    body: { monthlyInvocations: 5000 },
  }),
  CreateAgent: async () => ({ path: '/agents', caller: admin, body: agentBody({ instructions: contentOf('instructions') }) }),
  UpdateAgent: async () => {
    const agent = await createAgent({ apiKey: project.apiKey });
    return { path: `/agents/${agent.id}`, caller: service(), body: { name: 'Renamed', instructions: contentOf('instructions') } };
  },
  DeleteAgent: async () => ({ path: `/agents/${(await createAgent({ apiKey: project.apiKey })).id}`, caller: service() }),
  StartRoomHandoff: async () => ({ path: `/rooms/${await newRoom()}/handoff`, caller: service(), body: { note: contentOf('handoff') } }),
  CompleteRoomHandoff: async () => {
    const room = await newRoom();
    expectStatus(await api(`/rooms/${room}/handoff`, { apiKey: project.apiKey, body: {} }), 201);
    return { path: `/rooms/${room}/handoff`, caller: service(), body: { disposition: 'resolved', note: contentOf('resolved') } };
  },
  SetDispositions: async () => ({
    path: '/admin/agent-queue/dispositions',
    caller: service(),
    body: { dispositions: [{ code: 'audit_code', label: 'Audit' }] },
  }),
  RunDigest: async () => ({ path: '/admin/digest/run', caller: service(), body: { digestDate: '2030-06-15', maxUsers: 1 } }),
  ExportSubjectData: async () => ({ path: '/gdpr/export', caller: await userOf('member', 'exported') }),
  EraseSubject: async () => ({ path: '/gdpr/delete', caller: await userOf('admin', 'erased') }),
  CreateCannedResponse: async () => ({
    path: '/admin/support/canned-responses',
    caller: admin,
    body: { title: 'Welcome', content: contentOf('canned'), tags: ['intro'] },
  }),
  UpdateCannedResponse: async () => {
    const created = await api('/admin/support/canned-responses', { apiKey: project.apiKey, body: { title: 'Kept', content: 'x' } });
    return {
      path: `/admin/support/canned-responses/${expectStatus(created, 201).responseId}`,
      caller: admin,
      body: { content: contentOf('canned') },
    };
  },
  DeleteCannedResponse: async () => {
    const created = await api('/admin/support/canned-responses', { apiKey: project.apiKey, body: { title: 'Gone', content: 'x' } });
    return { path: `/admin/support/canned-responses/${expectStatus(created, 201).responseId}`, caller: admin };
  },
  PutBusinessHours: async () => ({
    path: '/admin/support/business-hours',
    caller: admin,
    body: { timezone: 'Europe/Berlin', weekly: { monday: [{ open: '09:00', close: '17:00' }] }, holidays: ['2030-12-25'] },
  }),
  UpdateTicket: async () => {
    const room = await newRoom();
    expectStatus(await api(`/rooms/${room}/members`, { apiKey: project.apiKey, body: { userId: member.userId } }), 201);
    const ticket = await api('/support/tickets/from-room', { token: member.token, body: { roomId: room } });
    return { path: `/support/tickets/${expectStatus(ticket, 201).ticket.ticketId}`, caller: admin, body: { status: 'pending' } };
  },
  PutWidgetSettings: async () => ({
    path: '/admin/widget',
    caller: admin,
    body: { allowedOrigins: ['https://shop.example.com'], supportRoomId: null },
  }),
  CreateBridge: async () => ({ path: '/admin/bridges', caller: admin, body: bridgeBodies.slack(roomId) }),
  UpdateBridge: async () => ({
    path: `/admin/bridges/${(await createSlackBridge(project.apiKey, roomId)).id}`,
    caller: admin,
    body: { channelId: 'C0CHANGED', botToken: `xoxb-${uniqueId('bot')}` },
  }),
  DeleteBridge: async () => ({ path: `/admin/bridges/${(await createSlackBridge(project.apiKey, roomId)).id}`, caller: admin }),
  PutPusherApp: async () => ({ path: '/admin/pusher-app', caller: admin }),
  SetProjectFeatureFlags: async () => ({ path: '/admin/feature-flags', caller: service(), body: { overrides: { voice_messages: true } } }),
  PutStatsObjectives: async () => ({ path: '/admin/stats/objectives', caller: admin, body: { availability: 0.995, latencyP95Ms: 400 } }),
};

const privileged = httpRoutes.filter(isPrivilegedRoute);

/** Sends the request as `caller`, with `traceId`. */
function send(route: HttpRoute, drive: Drive, traceId: string) {
  const { caller } = drive;
  const headers: Record<string, string> = { 'x-trace-id': traceId };
  if (caller.kind === 'operator') headers['x-service-operator-key'] = runtime().operatorKey;
  return api(drive.path, {
    method: route.method,
    headers,
    ...(caller.kind === 'service' ? { apiKey: caller.apiKey } : caller.kind === 'user' ? { token: caller.token } : {}),
    ...(drive.body === undefined ? {} : { body: drive.body }),
  });
}

/** The events of the project `apiKey` opens that carry `traceId`. */
async function eventsWith(apiKey: string, traceId: string) {
  const page = await api('/admin/audit/events?limit=100', { apiKey });
  expect(page.status).toBe(200);
  return (page.body.events as { traceId: string }[]).filter((event) => event.traceId === traceId);
}

/** The path parameters of `path` as sent, read against the route's template. */
function paramsOf(route: HttpRoute, path: string): Record<string, string> {
  const names = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);
  const pattern = new RegExp(`^${route.path.replace(/\{\w+\}/g, '([^/]+)')}$`);
  const values = pattern.exec(path)?.slice(1) ?? [];
  return Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(values[index] ?? '')]));
}

/** Strings sent or answered under a name that holds a secret or text, and the caller's credentials. */
function secretsOf(drive: Drive, answer: ApiResponse): string[] {
  const found: string[] = [];
  const walk = (value: unknown, name = '') => {
    if (typeof value === 'string') {
      if (value.length >= 8 && /secret|token|password|key|private|account|content|note|instructions|url/i.test(name)) found.push(value);
    } else if (Array.isArray(value)) for (const item of value) walk(item, name);
    else if (value && typeof value === 'object') for (const [key, item] of Object.entries(value)) walk(item, key);
  };
  walk(drive.body);
  walk(answer.body);
  const { caller } = drive;
  if (caller.kind === 'service') found.push(caller.apiKey);
  if (caller.kind === 'user') found.push(caller.token);
  if (caller.kind === 'operator') found.push(runtime().operatorKey);
  return found;
}

const copyable = (value: unknown) =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || Array.isArray(value) ? value : undefined;

beforeAll(async () => {
  project = await createTestProject('audit-coverage');
  [admin, member] = await Promise.all([userOf('admin'), userOf('member')]);
  roomId = uniqueId('audit-room');
  expectStatus(await api('/rooms', { token: member.token, body: { id: roomId, type: 'group' } }), 201);
});

describe('the audit events of the privileged routes', () => {
  it('has a case for every privileged route of the wiring table, and for no other', () => {
    // Assess
    expect(Object.keys(cases).sort()).toEqual(privileged.map((route) => route.id).sort());
  });

  describe.concurrent.each(privileged.map((route) => ({ id: route.id, method: route.method, path: route.path, route })))(
    '$method $path ($id)',
    ({ id, route }) => {
      it('leaves exactly one event: its action, the caller, the target, the trace id, and no secret or text', async () => {
        // Prepare
        const drive = await (cases[id] as () => Promise<Drive>)();
        const traceId = `audit-coverage-${id}-${uniqueId('t')}`;

        // Act
        const answer = await send(route, drive, traceId);

        // Assess
        expect(answer.status, JSON.stringify(answer.body)).toBeGreaterThanOrEqual(200);
        expect(answer.status, JSON.stringify(answer.body)).toBeLessThan(300);
        const events = await eventsWith(drive.readWith?.(answer) ?? project.apiKey, traceId);
        const { caller } = drive;
        const actor = caller.kind === 'user' ? { kind: 'user', userId: caller.userId, role: caller.role } : { kind: caller.kind };
        const target: Record<string, unknown> = { ...paramsOf(route, drive.path) };
        for (const field of route.audit?.target ?? []) {
          const [part, name = ''] = field.split('.', 2);
          const source = part === 'response' ? answer.body : part === 'body' ? drive.body : undefined;
          const value = copyable((source as Record<string, unknown> | undefined)?.[name]);
          // A field of the answer that is not there is a wiring entry naming the wrong field.
          if (part === 'response') expect(value, `${field} in the answer`).toBeDefined();
          if (value !== undefined) target[name] = value;
        }
        if (route.audit?.subject && caller.kind === 'user') target.subject = caller.userId;
        expect(events).toEqual([
          {
            id: expect.any(String),
            action: route.audit?.action,
            actor,
            target,
            outcome: 'succeeded',
            status: answer.status,
            traceId,
            at: expect.any(String),
          },
        ]);
        const text = JSON.stringify(events);
        expect(secretsOf(drive, answer).filter((secret) => text.includes(secret))).toEqual([]);
      });
    },
  );
});

describe('routes audited only when a privilege changes hands', () => {
  it('writes no event for a token of a member, guest or no roles, and one for a moderator', async () => {
    // Prepare
    const traceId = (what: string) => `audit-coverage-token-${what}-${uniqueId('t')}`;
    const bodies = { member: { roles: ['member'] }, guest: { roles: ['guest'] }, none: {}, mixed: { roles: ['member', 'admin'] } };

    // Act
    const sent = await Promise.all(
      Object.entries(bodies).map(async ([what, extra]) => {
        const id = traceId(what);
        const answer = await api('/auth/token', {
          apiKey: project.apiKey,
          headers: { 'x-trace-id': id },
          body: { userId: uniqueId(what), ...extra },
        });
        return { what, id, status: answer.status };
      }),
    );

    // Assess
    expect(sent.map((request) => request.status)).toEqual([201, 201, 201, 201]);
    const counts = await Promise.all(sent.map(async (request) => [request.what, (await eventsWith(project.apiKey, request.id)).length]));
    expect(Object.fromEntries(counts)).toEqual({ member: 0, guest: 0, none: 0, mixed: 1 });
  });

  it('writes no event for a member leaving a room, and one when someone else removes them', async () => {
    // Prepare
    const leaver = await userOf('member', 'leaver');
    expectStatus(await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey, body: { userId: leaver.userId } }), 201);
    const traceId = `audit-coverage-leave-${uniqueId('t')}`;

    // Act
    const left = await api(`/rooms/${roomId}/members/${leaver.userId}`, {
      method: 'DELETE',
      token: leaver.token,
      headers: { 'x-trace-id': traceId },
    });

    // Assess
    expect(left.status).toBe(204);
    expect(await eventsWith(project.apiKey, traceId)).toEqual([]);
  });

  it('audits a refused attempt (403) as denied, once', async () => {
    // Prepare
    const traceId = `audit-coverage-denied-${uniqueId('t')}`;

    // Act
    const refused = await api('/admin/feature-flags', {
      method: 'PUT',
      token: member.token,
      headers: { 'x-trace-id': traceId },
      body: { overrides: { voice_messages: false } },
    });

    // Assess
    expect(refused.status).toBe(403);
    expect(await eventsWith(project.apiKey, traceId)).toEqual([
      expect.objectContaining({
        action: 'flags.set',
        outcome: 'denied',
        status: 403,
        actor: { kind: 'user', userId: member.userId, role: 'member' },
      }),
    ]);
  });
});
