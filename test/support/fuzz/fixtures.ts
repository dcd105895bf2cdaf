import { createHmac } from 'node:crypto';
import { clientOf, uniqueId } from '../api';
import { base64url } from './arbitraries';

/** A project on the fuzz runtime, with the secrets its creation showed once. */
export interface FuzzProject {
  readonly projectId: string;
  readonly apiKey: string;
  readonly signingSecret: string;
}

/** A candidate for a path parameter: an id of something that exists, and what it is. */
export interface PoolEntry {
  readonly kind: 'room' | 'user' | 'project' | 'webhook' | 'notification';
  readonly id: string;
}

/**
 * What the fuzz requests stand on: project A (the one fuzzed), project B (the foreign tenant), a
 * sacrificial project whose keys `RotateProjectKeys` may rotate, and a key that no longer works.
 * A's users: `owner` (JWT role owner, passes every role check) and `member`; rooms of each type.
 */
export interface Fixtures {
  readonly baseUrl: string;
  readonly wsUrl: string;
  readonly operatorKey: string;
  readonly a: FuzzProject;
  readonly b: FuzzProject;
  readonly ownerId: string;
  readonly memberId: string;
  readonly tokens: {
    readonly owner: string;
    readonly member: string;
    readonly foreignOwner: string;
    /** Signed with A's secret, expired a minute ago. */
    readonly expired: string;
  };
  /** An API key of A's shape that was rotated away (the API key's form of "expired"). */
  readonly rotatedApiKey: string;
  readonly rooms: { readonly group: string; readonly public: string; readonly dm: string; readonly foreign: string };
  /**
   * A group room of `owner` and `member` that no generated request names (it is neither in `pool`
   * nor in `strings`), so no fuzzed route removes its members: the frame fuzz and the liveness
   * checks use it.
   */
  readonly quietRoom: string;
  /** Path parameter candidates; never A's or B's project id, so no fuzz request rotates their keys. */
  readonly pool: readonly PoolEntry[];
  /** Strings a field may plausibly accept: the ids above and a few well-formed words. */
  readonly strings: readonly string[];
}

/** An HS256 JWT signed with `secret`, synchronously (fast-check maps cannot await). */
export function signJwt(secret: string, claims: Record<string, unknown>, header: Record<string, unknown> = { alg: 'HS256', typ: 'JWT' }) {
  const unsigned = `${base64url(header)}.${base64url(claims)}`;
  return `${unsigned}.${createHmac('sha256', secret).update(unsigned).digest('base64url')}`;
}

async function must<T>(what: string, call: Promise<{ status: number; body: any }>, expected: number[]): Promise<T> {
  const response = await call;
  if (!expected.includes(response.status)) throw new Error(`${what}: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body as T;
}

/** Creates the fixtures through the API of the runtime at `baseUrl`. */
export async function createFixtures(baseUrl: string, operatorKey: string): Promise<Fixtures> {
  const call = clientOf(baseUrl);
  const operator = { 'x-service-operator-key': operatorKey };
  const project = (name: string) =>
    must<FuzzProject>(`project ${name}`, call('/platform/projects', { headers: operator, body: { name } }), [201]);
  const [a, b, sacrificial, rotated] = await Promise.all([
    project('fuzz-a'),
    project('fuzz-b'),
    project('fuzz-rotatable'),
    project('fuzz-old'),
  ]);
  await must('rotation', call(`/platform/projects/${rotated.projectId}/rotate-keys`, { headers: operator, body: { apiKey: true } }), [200]);

  const ownerId = uniqueId('owner');
  const memberId = uniqueId('member');
  const token = (apiKey: string, userId: string, roles: string[], sub?: string) =>
    must<{ token: string }>('token', call('/auth/token', { apiKey, body: { userId, roles, sub } }), [201]).then((body) => body.token);
  // The owner acts for a subject of its own on the GDPR routes: erasing the owner itself (the
  // routes' valid request) would end the memberships every later case stands on.
  const [owner, member, foreignOwner] = await Promise.all([
    token(a.apiKey, ownerId, ['owner'], uniqueId('gdpr-subject')),
    token(a.apiKey, memberId, ['member']),
    token(b.apiKey, ownerId, ['owner']),
  ]);
  const expired = signJwt(a.signingSecret, {
    projectId: a.projectId,
    userId: ownerId,
    roles: ['owner'],
    sub: ownerId,
    iat: Math.floor(Date.now() / 1000) - 3600,
    exp: Math.floor(Date.now() / 1000) - 60,
  });

  const rooms = { group: uniqueId('group'), public: uniqueId('public'), dm: '', foreign: uniqueId('foreign') };
  const quietRoom = uniqueId('quiet');
  await must('group room', call('/rooms', { token: owner, body: { id: rooms.group, type: 'group', members: [memberId] } }), [201]);
  await must('quiet room', call('/rooms', { token: owner, body: { id: quietRoom, type: 'group', members: [memberId] } }), [201]);
  // Created by the member: the owner is no member of it, so posting there joins it.
  await must('public room', call('/rooms', { token: member, body: { id: rooms.public, type: 'public' } }), [201]);
  rooms.dm = (await must<{ id: string }>('dm', call('/rooms', { token: owner, body: { type: 'dm', members: [memberId] } }), [201])).id;
  await must('foreign room', call('/rooms', { token: foreignOwner, body: { id: rooms.foreign, type: 'group' } }), [201]);
  await must('message', call(`/rooms/${rooms.group}/messages`, { token: owner, body: { content: 'hello' } }), [201]);
  await must(
    'credentials',
    call(`/users/${ownerId}/credentials`, { method: 'PUT', apiKey: a.apiKey, body: { password: 'fuzz-password-1' } }),
    [204],
  );
  const webhook = await call('/webhooks/register', {
    apiKey: a.apiKey,
    body: { url: 'https://example.com/fuzz-hook', eventTypes: ['message.created'], secret: 'fuzz-webhook-secret-0123' },
  });

  const pool: PoolEntry[] = [
    { kind: 'room', id: rooms.group },
    { kind: 'room', id: rooms.public },
    { kind: 'room', id: rooms.dm },
    { kind: 'room', id: rooms.foreign },
    { kind: 'user', id: ownerId },
    { kind: 'user', id: memberId },
    { kind: 'user', id: uniqueId('nobody') },
    { kind: 'project', id: sacrificial.projectId },
    ...(webhook.status === 201 ? [{ kind: 'webhook' as const, id: webhook.body.id as string }] : []),
  ];
  return {
    baseUrl,
    wsUrl: baseUrl.replace(/^http/, 'ws'),
    operatorKey,
    a,
    b,
    ownerId,
    memberId,
    tokens: { owner, member, foreignOwner, expired },
    rotatedApiKey: rotated.apiKey,
    rooms,
    quietRoom,
    pool,
    strings: [
      ...pool.map((entry) => entry.id),
      a.projectId,
      b.projectId,
      'hello',
      'https://example.com/fuzz',
      '2021-01-01T00:00:00.000Z',
      'message.created',
      'member',
      'fuzz.event',
      'fuzz-password-1',
    ],
  };
}
