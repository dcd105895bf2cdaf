import { beforeAll, describe, expect, it } from 'vitest';
import { type HttpRoute, ROLES, type Role } from '#wiring';
import { type ApiOptions, type ApiResponse, api, uniqueId } from '../api';
import { projectBeforeAll } from '../realtime-suite';
import { expectMatrixFile, routesOf } from './areas.ts';

/**
 * The role matrix (`test/e2e/role-matrix/<area>.test.ts`), who may do what: every project role and
 * the API key against every route with a `minRole` (from the wiring table), every route with
 * room-level rules (room owner, moderator, member, guest), every route with user-level rules (the
 * user themself, a project admin or the API key), every push route on the caller's own targets (any
 * user JWT, never the API key) and the AI reads open to every caller of the project. Each area's file
 * gives its routes' cases in the sections they fall in; the callers and what each gets are tables
 * made with {@link callerTable}.
 */

export type Auth = Pick<ApiOptions, 'token' | 'apiKey'>;
/** A response with the stored effect to check once the caller is known to be allowed or not. */
export type Checked = ApiResponse & { check?: (allowed: boolean) => Promise<void> };

const userKeys = ['guest', 'member', 'roomOwner', 'moderator', 'admin', 'owner', 'outsider'] as const;
/** A user of the project: one per project role, a room owner and a member of no room (`outsider`), all members but the last three. */
export type UserKey = (typeof userKeys)[number];
export type Caller = UserKey | 'apiKey';
/** What a caller gets: a status, or a refusal's status and error code. */
export type Answer = number | readonly [status: number, code: string];
export type CallerTable = Partial<Record<Caller, Answer>>;

export const FORBIDDEN: Answer = [403, 'forbidden'];
export const NOT_A_MEMBER: Answer = [403, 'not_a_member'];
/** A route that takes a user JWT only: the API key is no user. */
export const NO_API_KEY: Answer = [401, 'missing_credentials'];
/** The callers a room rule applies to: every user but the outsider, and the API key. */
export const ROOM_CALLERS: readonly Caller[] = ['guest', 'member', 'roomOwner', 'moderator', 'admin', 'owner', 'apiKey'];
/** Every user and the API key. */
export const EVERY_CALLER: readonly Caller[] = [...userKeys, 'apiKey'];

/**
 * What each caller gets: those `allowed` the `success` status, the other `callers` the `refused`
 * answer, and single callers what `except` gives them.
 */
export function callerTable(table: {
  callers: readonly Caller[];
  allowed: readonly Caller[];
  success: number;
  refused?: Answer;
  except?: CallerTable;
}): CallerTable {
  return Object.fromEntries(
    table.callers.map((caller) => [
      caller,
      table.except?.[caller] ?? (table.allowed.includes(caller) ? table.success : (table.refused ?? FORBIDDEN)),
    ]),
  );
}

const statusOf = (answer: Answer) => (typeof answer === 'number' ? answer : answer[0]);

/** The project of a role-matrix file, its users (one of each kind) and their tokens, made in `beforeAll`. */
export function roleMatrixBeforeAll(name: string) {
  const project = projectBeforeAll(name);
  const users = Object.fromEntries(userKeys.map((key) => [key, uniqueId(key.replace(/([A-Z])/g, '-$1').toLowerCase())])) as Record<
    UserKey,
    string
  >;
  const tokens = {} as Record<UserKey, string>;
  const roleOf: Record<UserKey, Role> = {
    guest: 'guest',
    member: 'member',
    roomOwner: 'member',
    moderator: 'moderator',
    admin: 'admin',
    owner: 'owner',
    outsider: 'member',
  };

  beforeAll(async () => {
    await Promise.all(
      userKeys.map(async (key) => {
        tokens[key] = await project.token(users[key], [roleOf[key]]);
      }),
    );
  });

  const newRoomByKey = async (type: 'group' | 'public' = 'group') => {
    const roomId = uniqueId('room');
    await api('/rooms', { apiKey: project.apiKey, body: { id: roomId, type } });
    return roomId;
  };
  /** A group room every role's user belongs to (the guest as a room guest): only the project role decides. */
  const roomOfEveryRole = async () => {
    const roomId = uniqueId('room');
    await api('/rooms', {
      apiKey: project.apiKey,
      body: { id: roomId, type: 'group', members: [users.member, users.moderator, users.admin, users.owner] },
    });
    await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey, body: { userId: users.guest, role: 'guest' } });
    return roomId;
  };
  const historyOf = async (roomId: string) => (await api(`/rooms/${roomId}/messages`, { apiKey: project.apiKey })).body.messages as any[];
  const authOf = (caller: Caller): Auth => (caller === 'apiKey' ? { apiKey: project.apiKey } : { token: tokens[caller] });

  return { project, users, tokens, newRoomByKey, roomOfEveryRole, historyOf, authOf };
}

export type RoleMatrixProject = ReturnType<typeof roleMatrixBeforeAll>;

export interface MinRoleCase {
  /** The role the contract asks for; checked against the wiring table. */
  readonly minRole: Role;
  readonly success: number;
  act(auth: Auth): Promise<Checked>;
}

export interface Room {
  readonly roomId: string;
  readonly target: string;
}

export interface RoomRule {
  readonly route: string;
  readonly rule: string;
  /** What each caller gets (callers left out do not apply). */
  readonly expected: CallerTable;
  act(auth: Auth, room: Room, caller: Caller): Promise<ApiResponse>;
  /** Checks the stored effect after the call. */
  check(room: Room, allowed: boolean, caller: Caller): Promise<void>;
}

export interface UserRule {
  readonly route: string;
  readonly success: number;
  act(auth: Auth): Promise<Checked>;
}

export interface OwnTargetRule {
  readonly route: string;
  readonly success: number;
  act(auth: Auth, owner: { userId: string; token: string }): Promise<Checked>;
}

export interface ProjectReadRule {
  readonly route: string;
  act(auth: Auth): Promise<ApiResponse & { check: () => Promise<void> }>;
}

/** An area's cases, by the section of the matrix each route falls in. */
export interface RoleMatrix {
  readonly minRole?: Record<string, MinRoleCase>;
  readonly roomRules?: readonly RoomRule[];
  readonly userRules?: readonly UserRule[];
  readonly ownTargetRules?: readonly OwnTargetRule[];
  readonly projectReads?: readonly ProjectReadRule[];
}

/** Paths of what belongs to the caller alone: their push targets, their inbox, their feed, their digest preferences. */
const OWN_THINGS = ['/push/', '/notifications', '/user/', '/digest/preferences'];
const isAiRoute = (route: HttpRoute) => route.handler.startsWith('http/ai/');
/** The routes each section must have a case for. */
const sectionRoutes = {
  minRole: (route: HttpRoute) => route.minRole !== undefined,
  roomRules: (route: HttpRoute) => isAiRoute(route) && !route.minRole && (route.path.includes('{roomId}') || route.auth === 'user'),
  userRules: (route: HttpRoute) => route.path.startsWith('/users/{userId}') && route.auth === 'userOrService',
  ownTargetRules: (route: HttpRoute) => OWN_THINGS.some((prefix) => route.path.startsWith(prefix)) && route.auth === 'user',
  projectReads: (route: HttpRoute) => isAiRoute(route) && route.auth === 'userOrService' && !route.minRole && !route.path.includes('{'),
};

/** The callers of the user-level rules: the user themself (`member`), a project admin or owner, or the API key. */
const userRuleCallers = (success: number) =>
  callerTable({
    callers: ['guest', 'member', 'roomOwner', 'moderator', 'admin', 'owner', 'apiKey'],
    allowed: ['member', 'admin', 'owner', 'apiKey'],
    success,
  });
/** The callers of the routes on their own things (push targets, inbox, feed, digest preferences): every user JWT, never the API key. */
const ownTargetCallers = (success: number) =>
  callerTable({
    callers: ['guest', 'member', 'roomOwner', 'moderator', 'admin', 'owner', 'apiKey'],
    allowed: ['guest', 'member', 'roomOwner', 'moderator', 'admin', 'owner'],
    success,
    refused: NO_API_KEY,
  });
const projectReadCallers = callerTable({ callers: EVERY_CALLER, allowed: EVERY_CALLER, success: 200 });

/** The callers of a table with whether each is allowed and the refusal the others get, in table order. */
const allowedOf = (table: CallerTable) =>
  (Object.entries(table) as [Caller, Answer][]).map(([caller, answer]) => ({
    caller,
    allowed: statusOf(answer) < 300,
    refusal: Array.isArray(answer) ? { status: answer[0], code: answer[1] } : undefined,
  }));

/** The role matrix of `areaId`: a completeness check and a section for each kind of case the area has. */
export function describeRoleMatrix(areaId: string, roles: RoleMatrixProject, matrix: RoleMatrix): void {
  const { project, users, tokens, authOf } = roles;
  const routes = routesOf(areaId);
  const ruled = (section: keyof typeof sectionRoutes) => routes.filter(sectionRoutes[section]).map((route) => route.id);

  it('has a case for every route of its area in each section that covers it, with the role the contract names', () => {
    // Assess
    expect(Object.fromEntries(routes.filter(sectionRoutes.minRole).map((route) => [route.id, route.minRole]))).toEqual(
      Object.fromEntries(Object.entries(matrix.minRole ?? {}).map(([id, c]) => [id, c.minRole])),
    );
    const roomRuled = new Set((matrix.roomRules ?? []).map((rule) => rule.route));
    expect(ruled('roomRules').filter((id) => !roomRuled.has(id))).toEqual([]);
    expect((matrix.userRules ?? []).map((rule) => rule.route).sort()).toEqual(ruled('userRules').sort());
    expect((matrix.ownTargetRules ?? []).map((rule) => rule.route).sort()).toEqual(ruled('ownTargetRules').sort());
    expect((matrix.projectReads ?? []).map((rule) => rule.route).sort()).toEqual(ruled('projectReads').sort());
    expectMatrixFile(areaId);
  });

  const cases = matrix.minRole ?? {};
  const routesWithMinRole = routes.filter(sectionRoutes.minRole);
  if (routesWithMinRole.length > 0) {
    describe('routes with a minimum project role', () => {
      const callers: { name: string; role?: Role; auth: () => Auth }[] = [
        ...ROLES.map((role) => ({ name: `${role} JWT`, role, auth: () => ({ token: tokens[role] }) })),
        { name: 'API key', auth: () => ({ apiKey: project.apiKey }) },
      ];

      describe.each(callers)('as $name', (caller) => {
        it.each(routesWithMinRole.map((route) => ({ id: route.id, method: route.method, path: route.path })))(
          '$method $path ($id)',
          async ({ id }) => {
            // Prepare
            const rule = cases[id];
            expect(rule, `no role-matrix case for ${id}`).toBeDefined();
            if (!rule) return;
            const allowed = caller.role === undefined || ROLES.indexOf(caller.role) >= ROLES.indexOf(rule.minRole);
            // Routes that take a user JWT only: the API key, which passes every role check, is no user.
            const userOnly = caller.role === undefined && routesWithMinRole.find((route) => route.id === id)?.auth === 'user';

            // Act
            const response = await rule.act(caller.auth());

            // Assess
            if (userOnly)
              expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 401, code: 'missing_credentials' });
            else if (allowed) expect(response.status).toBe(rule.success);
            else expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 403, code: 'forbidden' });
            await response.check?.(allowed && !userOnly);
          },
        );
      });
    });
  }

  const roomRules = matrix.roomRules ?? [];
  if (roomRules.length > 0) {
    describe('routes with room-level rules', () => {
      /**
       * A group room made by `roomOwner` with `member`, `moderator` and a bystander `target` as members
       * and `guest` added as a guest. The project admin and owner are not members, nor is `outsider`.
       */
      async function roomWithEveryone(): Promise<Room> {
        const roomId = uniqueId('room');
        const target = uniqueId('target');
        await api('/rooms', {
          token: tokens.roomOwner,
          body: { id: roomId, type: 'group', name: 'Before', members: [users.member, users.moderator, target] },
        });
        await api(`/rooms/${roomId}/members`, { token: tokens.roomOwner, body: { userId: users.guest, role: 'guest' } });
        return { roomId, target };
      }

      describe.each(roomRules.map((rule) => ({ ...rule, name: `${rule.route}: ${rule.rule}` })))('$name', (rule) => {
        it.each(EVERY_CALLER.filter((caller) => rule.expected[caller] !== undefined))('as %s', async (caller) => {
          // Prepare
          const room = await roomWithEveryone();
          const expected = rule.expected[caller] as Answer;
          const [status, code] = Array.isArray(expected) ? expected : [expected, undefined];
          const allowed = status < 300;

          // Act
          const response = await rule.act(authOf(caller), room, caller);

          // Assess
          expect({ status: response.status, code: allowed ? undefined : response.body?.error?.code }).toEqual({ status, code });
          await rule.check(room, allowed, caller);
        });
      });
    });
  }

  const userRules = matrix.userRules ?? [];
  if (userRules.length > 0) {
    describe('routes with user-level rules: the user themself, a project admin or the API key', () => {
      describe.each(userRules)('$route', (rule) => {
        it.each(allowedOf(userRuleCallers(rule.success)))('as $caller (allowed: $allowed)', async ({ caller, allowed, refusal }) => {
          // Act
          const response = await rule.act(authOf(caller));

          // Assess
          if (allowed) expect({ status: response.status, error: response.body?.error }).toEqual({ status: rule.success, error: undefined });
          else expect({ status: response.status, code: response.body?.error?.code }).toEqual(refusal);
          await response.check?.(allowed);
        });
      });
    });
  }

  const ownTargetRules = matrix.ownTargetRules ?? [];
  if (ownTargetRules.length > 0) {
    describe("routes on the caller's own targets, inbox, feed and digest preferences: every role with a user JWT, never the API key", () => {
      /** Whose targets a case prepares: the caller's own; for the API key (no user), the `member` user's, which must stay untouched. */
      const ownerOf = (caller: Caller) => {
        const user = caller === 'apiKey' ? 'member' : caller;
        return { userId: users[user], token: tokens[user] };
      };

      describe.each(ownTargetRules)('$route', (rule) => {
        it.each(allowedOf(ownTargetCallers(rule.success)))('as $caller (allowed: $allowed)', async ({ caller, allowed, refusal }) => {
          // Act
          const response = await rule.act(authOf(caller), ownerOf(caller));

          // Assess
          if (allowed) expect({ status: response.status, error: response.body?.error }).toEqual({ status: rule.success, error: undefined });
          else expect({ status: response.status, code: response.body?.error?.code }).toEqual(refusal);
          await response.check?.(allowed);
        });
      });
    });
  }

  const projectReads = matrix.projectReads ?? [];
  if (projectReads.length > 0) {
    describe('AI reads of the whole project: every role with a user JWT and the API key', () => {
      describe.each(projectReads)('$route', (rule) => {
        it.each(Object.keys(projectReadCallers) as Caller[])('as %s', async (caller) => {
          // Act
          const response = await rule.act(authOf(caller));

          // Assess
          expect({ status: response.status, error: response.body?.error }).toEqual({ status: 200, error: undefined });
          await response.check();
        });
      });
    });
  }
}
