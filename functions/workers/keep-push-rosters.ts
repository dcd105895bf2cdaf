import { rosterFollowsMembership } from '#domain/push/rosters';
import { eventSubscriber } from '#edge/message-subscriber';

/** The push roster subscriber's queue consumer: a joined member's targets enter the room's roster, a removed one's leave it. */
export const handler = eventSubscriber('keeping push rosters', ['room.member_joined', 'room.member_left'], rosterFollowsMembership);
