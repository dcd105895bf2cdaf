import * as z from '#shared/schema';

/**
 * The membership's vocabulary, apart from its operations so that the event catalogue can name it
 * without loading the table client (the catalogue is read by the local runtime and CDK before any
 * function's settings exist).
 */

/** Room-level role: `owner` created the room; `guest` may read and post but not fetch the e2e key. */
export const memberRole = z.enum(['owner', 'member', 'guest']);
export type MemberRole = z.infer<typeof memberRole>;

/** How a membership began: with the room, added by someone, or a user joining a public room on their own. */
export const MEMBERSHIP_ORIGINS = ['create', 'add', 'join'] as const;
export type MembershipOrigin = (typeof MEMBERSHIP_ORIGINS)[number];
