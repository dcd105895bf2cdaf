import { createHash, randomBytes } from 'node:crypto';
import { newEvent, outboxPut } from '#domain/events/outbox';
import { actorId, hasRole, isProjectAdmin, type Principal } from '#shared/auth';
import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import * as memberships from '#shared/db/membership';
import { type MemberRole, type MembershipItem, type MembershipOrigin, membershipItemFor, toMember } from '#shared/db/membership';
import {
  findRoom,
  findRooms,
  publicRoomIdsPage,
  publicRoomsIndexKey,
  putNewRoom,
  type Room,
  type RoomItem,
  type RoomPatch,
  type RoomType,
  roomIndexSk,
  roomKey,
  toRoom,
  updateRoomFields,
} from '#shared/db/room';
import { isConditionFailure, type TransactPart, transactWrite } from '#shared/db/transact';
import { BadRequestError, ConflictError, ForbiddenError, RoomNotFoundError } from '#shared/errors';
import { DM_ROOM_ID_PREFIX, GENERATED_ROOM_ID_PREFIX, refuseReservedId } from '#shared/ids';

/** Members named in one create request; more are added through the members route. */
export const MAX_MEMBERS_AT_CREATE = 100;

export interface RoomAccess {
  readonly room: RoomItem;
  /** Absent for a service principal, which acts without membership. */
  readonly membership?: MembershipItem;
}

const accessCache = new TtlCache<RoomAccess>(config.CACHE_TTL_MS);
const accessCacheKey = (projectId: string, roomId: string, userId: string) => `${projectId}|${roomId}|${userId}`;
/**
 * Forgets the room's cached accesses: this instance's next send reads the room again (other
 * instances see a change within `CACHE_TTL_MS`). Also for whoever changes the room item outside this
 * module (its wake flags).
 */
export const forgetRoomAccess = (projectId: string, roomId: string) => accessCache.deletePrefix(`${projectId}|${roomId}|`);

const dmRoomId = (userA: string, userB: string) =>
  `${DM_ROOM_ID_PREFIX}${createHash('sha256').update([userA, userB].sort().join('\n')).digest('hex').slice(0, 32)}`;

async function readRoom(projectId: string, roomId: string): Promise<RoomItem> {
  const room = await findRoom(projectId, roomId);
  if (!room) throw new RoomNotFoundError();
  return room;
}

/** A role for someone joining a public room on their own: guest-only tokens join as guests. */
const selfJoinRole = (principal: Principal): MemberRole => (hasRole(principal, 'member') ? 'member' : 'guest');

/**
 * Whether the caller may use a room, read with one BatchGet (room + membership) and cached for
 * `CACHE_TTL_MS`. A project member reaching a public room for the first time with `join` is added
 * to its membership; without `join` a public room is visible to all and a private one to its
 * members and the project's admins. Other tenants' rooms do not exist (404) because every key carries the
 * caller's project.
 */
export async function accessRoom(principal: Principal, roomId: string, options: { join: boolean }): Promise<RoomAccess> {
  const cacheKey = accessCacheKey(principal.projectId, roomId, principal.kind === 'user' ? principal.userId : '#service');
  const cached = accessCache.get(cacheKey);
  if (cached) return cached;
  if (principal.kind === 'service') {
    const access = { room: await readRoom(principal.projectId, roomId) };
    accessCache.set(cacheKey, access);
    return access;
  }

  const found = await memberships.findRoomAndMembership(principal.projectId, roomId, principal.userId);
  const room = found.room;
  if (!room) throw new RoomNotFoundError();
  let membership = found.membership;

  if (!membership) {
    const joinable = room.type === 'public' && options.join;
    // Project admins manage every room of their project without joining it.
    if (!joinable && (isProjectAdmin(principal) || room.type === 'public')) return { room };
    if (!joinable) throw new ForbiddenError('You are not a member of this room', 'not_a_member');
    membership = await addMembership(principal.projectId, roomId, principal.userId, selfJoinRole(principal), selfJoin(principal.userId));
  }
  const access = { room, membership };
  accessCache.set(cacheKey, access);
  return access;
}

/** True when a send by `principal` joins the room first: a user who is not a member of a public room. */
export const joinsOnSend = (principal: Principal, access: RoomAccess): principal is Extract<Principal, { kind: 'user' }> =>
  principal.kind === 'user' && !access.membership && access.room.type === 'public';

/**
 * Makes a user who reached a public room without a membership (`accessRoom` with `join: false`) a
 * member: the message pipeline joins its author only once nothing can refuse the message any more,
 * so a refused message leaves no membership behind.
 */
export async function joinPublicRoom(principal: Principal, access: RoomAccess): Promise<RoomAccess> {
  if (!joinsOnSend(principal, access)) return access;
  const { projectId, roomId } = access.room;
  const membership = await addMembership(projectId, roomId, principal.userId, selfJoinRole(principal), selfJoin(principal.userId));
  const joined = { room: access.room, membership };
  accessCache.set(accessCacheKey(projectId, roomId, principal.userId), joined);
  return joined;
}

/**
 * Makes `userId` a member of the room with `role` unless it is one already (an existing membership
 * is kept as it is). For members the service adds itself, such as an agent about to answer in the
 * room through the message pipeline, which needs its author to be a member.
 */
export async function ensureMember(projectId: string, roomId: string, userId: string, role: MemberRole): Promise<MembershipItem> {
  const membership = await addMembership(projectId, roomId, userId, role, { via: 'add', addedBy: 'service' });
  // An access read cached before the join would still say "not a member".
  accessCache.delete(accessCacheKey(projectId, roomId, userId));
  return membership;
}

/** How a membership began and who made it, as `room.member_joined` announces it. */
interface JoinOrigin {
  readonly via: MembershipOrigin;
  /** The acting user, `service` for the project API key, the user themself on a self join. */
  readonly addedBy: string;
}
const selfJoin = (userId: string): JoinOrigin => ({ via: 'join', addedBy: userId });

/**
 * The outbox write announcing a new membership, for the transaction that writes it: push keeps its
 * roster and webhooks hear of the join without the rooms area calling either.
 */
const joinedEventPart = (item: MembershipItem, origin: JoinOrigin): TransactPart =>
  outboxPut(
    newEvent('room.member_joined', item.projectId, {
      roomId: item.roomId,
      userId: item.userId,
      role: item.role,
      joinedAt: item.joinedAt,
      addedBy: origin.addedBy,
      via: origin.via,
    }),
  );

/** Tries of a join whose membership vanished between the refused write and the read of it. */
const JOIN_ATTEMPTS = 3;

/** Idempotent: an existing membership is kept as it is (a join never demotes) and announces nothing. */
async function addMembership(
  projectId: string,
  roomId: string,
  userId: string,
  role: MemberRole,
  origin: JoinOrigin,
): Promise<MembershipItem> {
  for (let attempt = 1; ; attempt++) {
    const item = membershipItemFor(projectId, roomId, userId, role, new Date().toISOString());
    try {
      await transactWrite([memberships.newMembershipPart(item), joinedEventPart(item, origin)]);
      return item;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const existing = await memberships.findMembership(projectId, roomId, userId, { consistent: true });
      if (existing) return existing;
      if (attempt === JOIN_ATTEMPTS)
        throw new ConflictError('membership_changed', 'The membership kept changing during the request; try again');
    }
  }
}

/** Memberships written per transaction at a room's creation: each with its event, 100 writes. */
const CREATE_MEMBERS_PER_TRANSACTION = 50;

export interface CreateRoomInput {
  readonly id?: string;
  readonly type: RoomType;
  readonly name?: string;
  readonly description?: string;
  readonly members: readonly string[];
  readonly e2eEnabled?: boolean;
}

/**
 * Creates a room with its members; the creating user is its owner. A dm has exactly two members
 * and one room per pair: asking again returns the existing room with `created: false`. Client ids
 * may not take the prefixes of the ids made here (`400 reserved_id`).
 */
export async function createRoom(principal: Principal, input: CreateRoomInput): Promise<{ room: Room; created: boolean }> {
  const projectId = principal.projectId;
  const creator = principal.kind === 'user' ? principal.userId : undefined;
  const members = [...new Set([...(creator ? [creator] : []), ...input.members])];
  if (members.length > MAX_MEMBERS_AT_CREATE) {
    throw new BadRequestError(`At most ${MAX_MEMBERS_AT_CREATE} members at creation`, [
      { field: 'body.members', message: 'too many members' },
    ]);
  }
  if (input.id !== undefined) refuseReservedId('room', input.id, 'body.id');
  let roomId = input.id;
  if (input.type === 'dm') {
    const [first, second] = members;
    if (members.length !== 2 || !first || !second) {
      throw new BadRequestError('A dm room has exactly two distinct members', [
        { field: 'body.members', message: 'a dm needs exactly two members, the caller included' },
      ]);
    }
    if (input.id)
      throw new BadRequestError('A dm room id is derived from its members', [{ field: 'body.id', message: 'not allowed for dm' }]);
    roomId = dmRoomId(first, second);
  }
  roomId ??= `${GENERATED_ROOM_ID_PREFIX}${randomBytes(10).toString('hex')}`;

  const now = new Date().toISOString();
  const item: RoomItem = {
    ...roomKey(projectId, roomId),
    ...(input.type === 'public' ? { gsi1pk: publicRoomsIndexKey(projectId), gsi1sk: roomIndexSk(roomId) } : {}),
    projectId,
    roomId,
    type: input.type,
    ...(input.name === undefined ? {} : { name: input.name }),
    ...(input.description === undefined ? {} : { description: input.description }),
    e2eEnabled: input.e2eEnabled ?? false,
    e2eKey: randomBytes(32).toString('base64'),
    wakeFlagsKept: true,
    createdBy: actorId(principal),
    createdAt: now,
    updatedAt: now,
  };
  const origin: JoinOrigin = { via: 'create', addedBy: actorId(principal) };
  if (!(await putNewRoom(item))) {
    if (input.type === 'dm') return { room: toRoom(await existingDm(projectId, roomId, members, origin)), created: false };
    throw new ConflictError('room_exists', `Room ${roomId} already exists`);
  }
  // dm members are peers; in other rooms the creator owns the room.
  const items = members.map((userId) =>
    membershipItemFor(projectId, roomId, userId, userId === creator && input.type !== 'dm' ? 'owner' : 'member', now),
  );
  const batches = [];
  for (let start = 0; start < items.length; start += CREATE_MEMBERS_PER_TRANSACTION) {
    batches.push(items.slice(start, start + CREATE_MEMBERS_PER_TRANSACTION));
  }
  // The room is new, so no membership is there to keep: each is written with the event announcing it.
  await Promise.all(
    batches.map((batch) =>
      transactWrite(batch.flatMap((member) => [memberships.membershipPutPart(member), joinedEventPart(member, origin)])),
    ),
  );
  return { room: toRoom(item), created: true };
}

/**
 * The room already under a pair's dm id, only if it is their dm: another room there (one made under
 * that id before dm ids were reserved) would hand its owner the pair's conversation. A dm whose
 * create stopped before a membership was written gets it now.
 */
async function existingDm(projectId: string, roomId: string, pair: readonly string[], origin: JoinOrigin): Promise<RoomItem> {
  const taken = () => new ConflictError('dm_id_taken', 'Another room holds the id of this dm');
  const room = await readRoom(projectId, roomId);
  if (room.type !== 'dm') throw taken();
  // A third member is enough to refuse: a dm's membership is fixed at two.
  const page = await memberships.membershipsPage(projectId, roomId, { limit: pair.length + 1, consistent: true });
  const memberIds = page.memberships.map((membership) => membership.userId);
  if (memberIds.some((userId) => !pair.includes(userId))) throw taken();
  for (const userId of pair.filter((userId) => !memberIds.includes(userId)))
    await addMembership(projectId, roomId, userId, 'member', origin);
  return room;
}

export async function getRoom(principal: Principal, roomId: string): Promise<Room & { membership: ReturnType<typeof toMember> | null }> {
  const { room, membership } = await accessRoom(principal, roomId, { join: false });
  return { ...toRoom(room), membership: membership ? toMember(membership) : null };
}

/** Room owner, project admin/owner or a service principal may change a room. */
function canManageRoom(principal: Principal, access: RoomAccess): boolean {
  return isProjectAdmin(principal) || access.membership?.role === 'owner';
}

export async function updateRoom(principal: Principal, roomId: string, patch: RoomPatch): Promise<Room> {
  const access = await accessRoom(principal, roomId, { join: false });
  if (!canManageRoom(principal, access)) throw new ForbiddenError('Only the room owner or a project admin may change the room');
  const updated = await updateRoomFields(principal.projectId, roomId, patch, new Date().toISOString());
  if (!updated) throw new RoomNotFoundError();
  forgetRoomAccess(principal.projectId, roomId);
  return toRoom(updated);
}

const PAGE_MAX = 100;
/** Members on one page of `GET /rooms/{roomId}/members`. */
export const MEMBERS_PAGE_MAX = 500;

/** The caller's rooms through the membership index, or with `scope: 'public'` the public directory. */
export async function listRooms(
  principal: Principal & { kind: 'user' },
  options: { scope: 'mine' | 'public'; limit: number; cursor?: string },
): Promise<{ rooms: Room[]; nextCursor: string | null }> {
  const page = { ...(options.cursor ? { after: options.cursor } : {}), limit: Math.min(options.limit, PAGE_MAX) };
  const { roomIds, more } =
    options.scope === 'public'
      ? await publicRoomIdsPage(principal.projectId, page)
      : await memberships.userRoomIdsPage(principal.projectId, principal.userId, page);
  const rooms = new Map((await findRooms(principal.projectId, roomIds)).map((room) => [room.roomId, room] as const));
  const nextCursor = more ? (roomIds.at(-1) ?? null) : null;
  return { rooms: roomIds.flatMap((id) => rooms.get(id) ?? []).map(toRoom), nextCursor };
}

/**
 * One page of a room's members by user id, after the `cursor` member: a room may hold any number, and
 * one request reads at most a page of them.
 */
export async function listMembers(
  principal: Principal,
  roomId: string,
  options: { limit: number; cursor?: string },
): Promise<{ members: ReturnType<typeof toMember>[]; nextCursor: string | null }> {
  await accessRoom(principal, roomId, { join: false });
  const limit = Math.min(options.limit, MEMBERS_PAGE_MAX);
  const page = await memberships.membershipsPage(principal.projectId, roomId, {
    ...(options.cursor === undefined ? {} : { after: options.cursor }),
    limit,
  });
  const members = page.memberships.map(toMember);
  return { members, nextCursor: page.more ? (members.at(-1)?.userId ?? null) : null };
}

/** Room owner, moderators and above add members or change their room role; dm membership is fixed. */
export async function addMember(principal: Principal, roomId: string, input: { userId: string; role: 'member' | 'guest' }) {
  const access = await accessRoom(principal, roomId, { join: false });
  if (access.room.type === 'dm') throw new ConflictError('dm_membership_fixed', 'A dm room has exactly its two members');
  if (!canManageRoom(principal, access) && !hasRole(principal, 'moderator')) {
    throw new ForbiddenError('Only the room owner, a moderator or an admin may add members');
  }
  const read = () => memberships.findMembership(principal.projectId, roomId, input.userId, { consistent: true });
  let current = await read();
  for (let attempt = 1; ; attempt++) {
    if (current?.role === 'owner' || current?.role === input.role) return { member: toMember(current), created: false };
    const item = membershipItemFor(principal.projectId, roomId, input.userId, input.role, current?.joinedAt ?? new Date().toISOString());
    try {
      // Written only over the state just read, so of many concurrent adds exactly one creates (and announces the join).
      await transactWrite(
        current
          ? [memberships.membershipRoleChangePart(item, current.role)]
          : [memberships.newMembershipPart(item), joinedEventPart(item, { via: 'add', addedBy: actorId(principal) })],
      );
      forgetRoomAccess(principal.projectId, roomId);
      return { member: toMember(item), created: current === undefined };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      if (attempt === JOIN_ATTEMPTS)
        throw new ConflictError('membership_changed', 'The membership kept changing during the request; try again');
      current = await read();
    }
  }
}

export async function removeMember(principal: Principal, roomId: string, userId: string): Promise<void> {
  const access = await accessRoom(principal, roomId, { join: false });
  if (access.room.type === 'dm') throw new ConflictError('dm_membership_fixed', 'A dm room has exactly its two members');
  const leavingThemselves = principal.kind === 'user' && principal.userId === userId;
  if (!leavingThemselves && !canManageRoom(principal, access) && !hasRole(principal, 'moderator')) {
    throw new ForbiddenError('Only the member, the room owner, a moderator or an admin may remove a member');
  }
  await endMembership(principal.projectId, roomId, userId, actorId(principal));
}

/**
 * Ends a membership, whatever the room's type, with the `room.member_left` event: push drops the
 * roster entry and realtime closes the member's sockets to the room when they handle it
 * (docs/architecture.md, "Events between areas"). `false` when there was none (or another request
 * removed it meanwhile, and announced it). The members route checks who may; GDPR erasure calls it
 * for each of the subject's rooms, dm rooms included.
 */
export async function endMembership(projectId: string, roomId: string, userId: string, removedBy: string): Promise<boolean> {
  const membership = await memberships.findMembership(projectId, roomId, userId, { consistent: true });
  let ended = false;
  if (membership) {
    const left = newEvent('room.member_left', projectId, {
      roomId,
      userId,
      role: membership.role,
      removedBy,
      leftAt: new Date().toISOString(),
    });
    try {
      await transactWrite([memberships.endMembershipPart(projectId, roomId, userId), outboxPut(left)]);
      ended = true;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
  forgetRoomAccess(projectId, roomId);
  return ended;
}

/**
 * The room's end-to-end key, for members. A guest membership (how a guest-only token joins a
 * public room) gets 403 until promoted to `member` through the members route.
 */
export async function getE2eKey(principal: Principal & { kind: 'user' }, roomId: string) {
  const { room, membership } = await accessRoom(principal, roomId, { join: false });
  if (!membership) throw new ForbiddenError('Only members may fetch the room key', 'not_a_member');
  if (membership.role === 'guest') throw new ForbiddenError('Guests may not fetch the room key', 'guest_forbidden');
  return { roomId, e2eKey: room.e2eKey, e2eEnabled: room.e2eEnabled };
}
