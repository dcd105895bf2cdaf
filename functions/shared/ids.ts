import { randomBytes } from 'node:crypto';
import { BadRequestError } from '#shared/errors';
import * as z from '#shared/schema';

/** Project ids: what API keys (`ck_<projectId>_...`) and webhook ids embed, and keys begin with. */
export const PROJECT_ID_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/;

/** Ids that may appear inside keys: no `#`, bounded length. */
export const idSchema = z
  .string()
  .check(z.minLength(1), z.maxLength(128), z.regex(/^[A-Za-z0-9_.:@-]+$/, 'must be 1-128 characters of letters, digits and _ . : @ -'));

/** A short random id with a readable prefix, e.g. `room_3k9x...`. */
export function newId(prefix: string, bytes = 10): string {
  return `${prefix}_${randomBytes(bytes).toString('base64url').replace(/[-_]/g, 'x')}`;
}

/** A dm's room id: `dm_` and a hash of its two members, so anyone can compute it. */
export const DM_ROOM_ID_PREFIX = 'dm_';
/** A room created without an id. */
export const GENERATED_ROOM_ID_PREFIX = 'room_';
/** An agent speaks as the user `agent:<handle>` and keys its answers to a mention as `agent:<handle>:<eventId>`. */
export const AGENT_USER_PREFIX = 'agent:';
/** An in-room AI agent's user id (`agent:<handle>`). */
export const isAgentUserId = (userId: string) => userId.startsWith(AGENT_USER_PREFIX);
/**
 * What stands for an erased user where a record must keep an author or actor (a message's
 * tombstone, a task's claimer): no token may name it, so nobody speaks or acts as it.
 */
export const ERASED_USER_PREFIX = 'erased:';
export const ERASED_USER_ID = `${ERASED_USER_PREFIX}user`;
/**
 * A guest session's user (`POST /auth/guest`): the service draws the rest at random. Only a token
 * shaped as a guest's (the `guest` role alone, bound to an origin) may name such an id
 * (`functions/shared/auth.ts`), so no member token, minted or signed, can speak as a guest.
 */
export const GUEST_USER_PREFIX = 'guest_';
export const newGuestUserId = () => newId(GUEST_USER_PREFIX.slice(0, -1));
export const isGuestUserId = (userId: string) => userId.startsWith(GUEST_USER_PREFIX);

/**
 * A bridge's id carries its project (`br_<projectId>_<24 hex>`), as a webhook's does: the platforms
 * call `/webhooks/bridge/<platform>/<bridgeId>` with no credential of ours, and the id finds the
 * bridge within its project's keys.
 */
export const BRIDGE_ID_PATTERN = /^br_([a-z0-9][a-z0-9-]{1,62})_([0-9a-f]{24})$/;
export const newBridgeId = (projectId: string) => `br_${projectId}_${randomBytes(12).toString('hex')}`;
/** The project a bridge id names, `undefined` when it is not a bridge id. */
export const projectOfBridgeId = (bridgeId: string) => BRIDGE_ID_PATTERN.exec(bridgeId)?.[1];

/**
 * The user ids people on a bridged platform speak as: `slack:<team>:<user>`,
 * `discord:<guild>:<user>`, `matrix:<@user:server>`. The platform vouches for them, not a token.
 */
export const BRIDGE_USER_PREFIXES = ['slack:', 'discord:', 'matrix:'] as const;
/** A bridged message's `clientMessageId`: `bridge:` and a digest of the bridge and the platform's event id. */
export const BRIDGE_CLIENT_MESSAGE_PREFIX = 'bridge:';

/**
 * Where a client names an id in a namespace the service also derives ids in, the prefixes of the
 * derived ones. Derived ids are predictable (a dm's from its members, an agent answer's from the
 * mention), so a client allowed one could claim it first: a group room under two other users' dm
 * id, whose owner then reads their dm; a message under an agent answer's key, which silences it; a
 * user id an agent speaks as.
 */
export const RESERVED_ID_PREFIXES = {
  room: [DM_ROOM_ID_PREFIX, GENERATED_ROOM_ID_PREFIX],
  // A bridged message is keyed by its platform event: a client taking the key first would silence it.
  clientMessage: [AGENT_USER_PREFIX, BRIDGE_CLIENT_MESSAGE_PREFIX],
  // A user `agent:<handle>` would post as the agent: its messages would pass for the agent's answers.
  // `erased:user` stands for every erased user: one who took it would own their tombstones.
  // `guest_…` is a widget visitor's: a customer backend that mints tokens for names its users pick
  // would otherwise let one pick a guest's id and read that guest's support conversation.
  // `slack:…`, `discord:…`, `matrix:…` are people on a bridged platform: a token naming one would speak for them.
  user: [AGENT_USER_PREFIX, ERASED_USER_PREFIX, GUEST_USER_PREFIX, ...BRIDGE_USER_PREFIXES],
} as const;

/** The reserved prefix `id` begins with, where it begins with one of `kind`'s. */
export const reservedPrefixOf = (kind: keyof typeof RESERVED_ID_PREFIXES, id: string): string | undefined =>
  RESERVED_ID_PREFIXES[kind].find((reserved) => id.startsWith(reserved));

/** `400 reserved_id` for a client-chosen id in a prefix the service keeps for the ids it derives. */
export function refuseReservedId(kind: keyof typeof RESERVED_ID_PREFIXES, id: string, field: string): void {
  const prefix = reservedPrefixOf(kind, id);
  if (prefix === undefined) return;
  throw new BadRequestError(
    `Ids beginning with ${prefix} are made by the service`,
    [{ field, message: `must not begin with ${prefix}` }],
    'reserved_id',
  );
}
