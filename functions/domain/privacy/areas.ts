import { toAgentTask } from '#domain/ai/agent-tasks';
import { toAgent } from '#domain/ai/agents';
import { toHandoff } from '#domain/ai/handoff';
import { eraseUploadsOfUser, uploadsOfUser } from '#domain/attachments/privacy';
import { toDigestPreferences } from '#domain/digest/preferences';
import { recountReactions } from '#domain/messages/reaction-counter';
import { toFeedEntry } from '#domain/notifications/feed';
import { toNotification } from '#domain/notifications/inbox';
import { syncRosters } from '#domain/push/rosters';
import { toWebSubscription } from '#domain/push/targets';
import { userConnections } from '#domain/realtime/connections';
import { closeConnections } from '#domain/realtime/disconnect';
import { endMembership } from '#domain/rooms/rooms';
import { toSurvey } from '#domain/support/csat';
import { toTicket } from '#domain/support/tickets';
import * as feed from '#shared/db/activity-feed';
import * as agents from '#shared/db/agent';
import * as tasks from '#shared/db/agent-task';
import * as businessHours from '#shared/db/business-hours';
import * as cannedResponses from '#shared/db/canned-responses';
import * as connections from '#shared/db/connection';
import * as csat from '#shared/db/csat-survey';
import * as digestDeliveries from '#shared/db/digest-delivery';
import * as digestPreferences from '#shared/db/digest-preference';
import * as dispositions from '#shared/db/dispositions';
import * as flags from '#shared/db/feature-flags';
import * as handoffs from '#shared/db/handoff';
import * as memberships from '#shared/db/membership';
import * as messages from '#shared/db/message';
import * as moderation from '#shared/db/moderation';
import * as notifications from '#shared/db/notification';
import * as exports from '#shared/db/privacy-export';
import * as push from '#shared/db/push';
import * as rateLimits from '#shared/db/rate-limit-window';
import * as reactions from '#shared/db/reaction';
import * as reports from '#shared/db/report';
import * as rooms from '#shared/db/room';
import { clearSignInFailures } from '#shared/db/sign-in-failures';
import * as streamLeases from '#shared/db/stream-leases';
import * as tickets from '#shared/db/support-ticket';
import * as credentials from '#shared/db/user-credentials';
import * as watchlist from '#shared/db/watchlist';
import { httpRoutes, webSocketFrames } from '#wiring';

/** What every area's part of an export or an erasure works on: one subject of one project. */
export interface PrivacySubject {
  readonly projectId: string;
  readonly userId: string;
  /** Who asked, for the events an erasure writes (`removedBy`). */
  readonly actor: string;
}

/**
 * One area's part in GDPR export and erasure. `export` reads what the area holds about the subject
 * (its section of the export, under `id`); `erase` removes it, or makes the records that must stay
 * anonymous, and answers how many items it changed. Each `erase` is idempotent and starts from
 * what is left (it reads again rather than trusting a list made before a crash), so a resumed
 * erasure runs an unfinished step from its start. Steps run in this order: connections first (no
 * socket of the subject keeps receiving), memberships after the areas that find their items through
 * them, credentials and staged exports last.
 */
export interface PrivacyArea {
  readonly id: string;
  readonly export?: (subject: PrivacySubject) => Promise<unknown>;
  readonly erase: (subject: PrivacySubject) => Promise<number>;
}

const MESSAGE_PAGE = 200;

/** `abcd…wxyz`: enough to tell one's own targets apart, not enough to use one. */
const maskSecret = (value: string) => (value.length <= 12 ? '…' : `${value.slice(0, 4)}…${value.slice(-4)}`);

const roomIdsOf = async (subject: PrivacySubject) => memberships.allUserRoomIds(subject.projectId, subject.userId);

/** The buckets and keys a user's rate-limit counters live under (`route-guards.ts`, the message pipeline, `$connect`). */
function userRateLimitKeys(userId: string): { bucket: string; key: string }[] {
  const perUser = [...httpRoutes, ...webSocketFrames].flatMap((route) => (route.rateLimit?.per === 'user' ? [route.rateLimit.bucket] : []));
  return [
    ...[...new Set(['messages', ...perUser])].map((bucket) => ({ bucket, key: `user:${userId}` })),
    { bucket: 'ws-public', key: userId },
  ];
}

async function eraseAuthoredMessages({ projectId, userId }: PrivacySubject): Promise<number> {
  let erased = 0;
  let cursor: Record<string, unknown> | undefined;
  do {
    const page = await messages.authoredMessagesPage(projectId, userId, { limit: MESSAGE_PAGE, cursor });
    const results = await Promise.all(page.items.map((item) => messages.eraseMessageContent(projectId, item.roomId, item.id, userId)));
    erased += results.filter(Boolean).length;
    cursor = page.cursor;
  } while (cursor);
  const flagged = await moderation.moderationRecordsOfUser(projectId, userId);
  const forgotten = await Promise.all(flagged.map((record) => moderation.forgetModerationRecordAuthor(record, userId)));
  return erased + forgotten.filter(Boolean).length;
}

async function authoredMessages({ projectId, userId }: PrivacySubject) {
  const all: ReturnType<typeof messages.toMessage>[] = [];
  let cursor: Record<string, unknown> | undefined;
  do {
    const page = await messages.authoredMessagesPage(projectId, userId, { limit: MESSAGE_PAGE, cursor });
    all.push(...page.items.map(messages.toMessage));
    cursor = page.cursor;
  } while (cursor);
  return all;
}

/** Every user id of a room's members, page after page. */
async function memberIdsOf(projectId: string, roomId: string): Promise<string[]> {
  const ids: string[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await memberships.membershipsPage(projectId, roomId, { after, limit: 100 });
    ids.push(...page.memberships.map((item) => item.userId));
    if (!page.more) return ids;
    after = page.memberships.at(-1)?.userId;
  }
}

/**
 * Others' notifications and feed entries that copied the subject's id or words (a reply, a
 * mention, a dm): found through the rooms the subject wrote in or belongs to, then each member's
 * inbox and feed (one partition each), so the cost grows with those rooms' members and their
 * inboxes (90 days at most). Redacted in place rather than deleted: the owners' unread counts stay
 * right. A member who has left such a room since is not reached (their copy expires with its TTL).
 */
async function redactCopiesInOthersInboxes({ projectId, userId }: PrivacySubject): Promise<number> {
  const written = new Set<string>();
  let cursor: Record<string, unknown> | undefined;
  do {
    const page = await messages.authoredMessagesPage(projectId, userId, { limit: MESSAGE_PAGE, cursor });
    for (const item of page.items) written.add(`${item.roomId} ${item.id}`);
    cursor = page.cursor;
  } while (cursor);
  const roomIds = new Set([...written].map((key) => key.slice(0, key.indexOf(' '))));
  for (const roomId of await memberships.allUserRoomIds(projectId, userId)) roomIds.add(roomId);
  const members = new Set<string>();
  for (const roomId of roomIds) for (const member of await memberIdsOf(projectId, roomId)) members.add(member);
  members.delete(userId);
  let redacted = 0;
  for (const member of members) {
    const [inbox, entries] = await Promise.all([
      notifications.notificationsOfUser(projectId, member),
      feed.feedEntriesOfUser(projectId, member),
    ]);
    const results = await Promise.all([
      ...inbox
        .filter((item) => item.roomId !== undefined && item.messageId !== undefined && written.has(`${item.roomId} ${item.messageId}`))
        .filter((item) => item.body !== '')
        .map((item) => notifications.redactNotification(projectId, member, item.notificationId)),
      ...entries.filter((entry) => entry.actorId === userId).map((entry) => feed.redactFeedEntry(projectId, member, entry.entryId)),
    ]);
    redacted += results.filter(Boolean).length;
  }
  return redacted;
}

/** The handoffs of the rooms the subject's tasks name, where the subject took or completed them. */
async function handoffsOf({ projectId, userId }: PrivacySubject, ownTasks: readonly tasks.AgentTaskItem[]) {
  const roomIds = [...new Set(ownTasks.map((task) => task.roomId))];
  const found = await Promise.all(roomIds.map((roomId) => handoffs.findHandoff(projectId, roomId)));
  return found.filter(
    (item): item is handoffs.HandoffItem => item !== undefined && (item.takenBy === userId || item.completedBy === userId),
  );
}

/** Every area holding a user's items, in erasure order. */
export const privacyAreas: readonly PrivacyArea[] = [
  {
    id: 'connections',
    export: async ({ projectId, userId }) =>
      (await userConnections(projectId, userId)).map((ref) => ({
        connectionId: ref.connectionId,
        channel: ref.channel,
        roomId: ref.roomId ?? null,
      })),
    erase: async (subject) => {
      const closed = await closeConnections(await userConnections(subject.projectId, subject.userId));
      await connections.deleteUserConnectionRecords(subject.projectId, subject.userId, await roomIdsOf(subject));
      await streamLeases.deleteUserStreamLeases(subject.projectId, subject.userId);
      return closed;
    },
  },
  {
    id: 'push',
    export: async ({ projectId, userId }) => {
      const { items } = await push.userTargets(projectId, userId);
      return {
        devices: items.flatMap((item) =>
          'deviceId' in item
            ? [
                {
                  id: item.deviceId,
                  platform: item.platform,
                  token: maskSecret(item.token),
                  createdAt: item.createdAt,
                  updatedAt: item.updatedAt,
                },
              ]
            : [],
        ),
        webPushSubscriptions: items.flatMap((item) => ('subscriptionId' in item ? [toWebSubscription(item)] : [])),
      };
    },
    erase: async ({ projectId, userId }) => {
      const { items } = await push.userTargets(projectId, userId);
      for (const item of items) {
        await push.deleteTarget(
          projectId,
          userId,
          'deviceId' in item ? 'device' : 'web',
          'deviceId' in item ? item.deviceId : item.subscriptionId,
        );
      }
      // With no targets left, every roster entry of the subject goes (one small write per room).
      await syncRosters(projectId, userId);
      await push.deleteTargetsVersion(projectId, userId);
      return items.length;
    },
  },
  {
    id: 'watchlist',
    export: async ({ projectId, userId }) =>
      (await watchlist.watchesOf(projectId, userId, 1000)).map((watch) => ({
        type: watch.type,
        targetId: watch.targetId,
        createdAt: watch.createdAt,
      })),
    erase: async ({ projectId, userId }) => {
      let removed = 0;
      for (
        let page = await watchlist.watchesOf(projectId, userId, 100);
        page.length > 0;
        page = await watchlist.watchesOf(projectId, userId, 100)
      ) {
        await Promise.all(page.map((watch) => watchlist.deleteWatch(projectId, userId, watch.type, watch.targetId)));
        removed += page.length;
      }
      // Others' watches of the subject go too: the target is the subject.
      const watchers = await watchlist.watcherIdsOf(projectId, 'user', userId);
      await Promise.all(watchers.map((watcherId) => watchlist.deleteWatch(projectId, watcherId, 'user', userId)));
      return removed + watchers.length;
    },
  },
  {
    // Before `messages`: the author index still lists what the subject wrote.
    id: 'copiesInOthersInboxes',
    erase: redactCopiesInOthersInboxes,
  },
  {
    id: 'messages',
    export: authoredMessages,
    erase: eraseAuthoredMessages,
  },
  {
    id: 'reactions',
    export: async ({ projectId, userId }) =>
      (await reactions.reactionsOfUser(projectId, userId)).map(({ roomId, messageId, emoji, createdAt }) => ({
        roomId,
        messageId,
        emoji,
        createdAt,
      })),
    // The counts on the messages are recounted from what is left, as the reaction counter does.
    erase: async ({ projectId, userId }) => {
      const items = await reactions.reactionsOfUser(projectId, userId);
      await reactions.deleteReactions(items);
      const touched = new Map(items.map((item) => [`${item.roomId}|${item.messageId}`, item] as const));
      for (const item of touched.values()) await recountReactions({ projectId, roomId: item.roomId, messageId: item.messageId });
      return items.length;
    },
  },
  {
    id: 'reports',
    export: async ({ projectId, userId }) => (await reports.reportsOfUser(projectId, userId)).map(reports.toReport),
    erase: async ({ projectId, userId }) => {
      const items = await reports.reportsOfUser(projectId, userId);
      await reports.deleteReports(items);
      return items.length;
    },
  },
  {
    // After `messages`: the tombstones no longer link the files this deletes.
    id: 'uploads',
    export: ({ projectId, userId }) => uploadsOfUser(projectId, userId),
    erase: ({ projectId, userId }) => eraseUploadsOfUser(projectId, userId),
  },
  {
    id: 'moderationFlags',
    export: async ({ projectId, userId }) =>
      (await moderation.moderationRecordsOfUser(projectId, userId)).map(moderation.toModerationRecord),
    // Made anonymous with the messages they flag (`messages`).
    erase: async () => 0,
  },
  {
    id: 'agentWork',
    export: async (subject) => {
      const ownTasks = await tasks.agentTasksOfUser(subject.projectId, subject.userId);
      const created = (await agents.queryAgents(subject.projectId, { consistent: true })).filter(
        (agent) => agent.createdBy === subject.userId,
      );
      return {
        tasks: ownTasks.map(toAgentTask),
        handoffs: (await handoffsOf(subject, ownTasks)).map(toHandoff),
        agentsCreated: created.map(toAgent),
      };
    },
    erase: async (subject) => {
      const { projectId, userId } = subject;
      const ownTasks = await tasks.agentTasksOfUser(projectId, userId);
      const ownHandoffs = await handoffsOf(subject, ownTasks);
      const created = (await agents.queryAgents(projectId, { consistent: true })).filter((agent) => agent.createdBy === userId);
      const changed = await Promise.all([
        ...ownHandoffs.map((item) => handoffs.forgetHandoffActor(item, userId)),
        ...ownTasks.map((item) => tasks.forgetAgentTaskActor(item, userId)),
        ...created.map((item) => agents.forgetAgentCreator(item, userId)),
        // Project settings remember their last editor.
        flags.forgetFlagsEditor(projectId, userId),
        moderation.forgetBlockListEditor(projectId, userId),
        dispositions.forgetDispositionsEditor(projectId, userId),
      ]);
      return changed.filter(Boolean).length;
    },
  },
  {
    id: 'memberships',
    export: async ({ projectId, userId }) => {
      const own = await memberships.membershipsOfUser(projectId, userId);
      const roomItems = new Map(
        (
          await rooms.findRooms(
            projectId,
            own.map((item) => item.roomId),
          )
        ).map((room) => [room.roomId, room]),
      );
      return own.map((item) => {
        const room = roomItems.get(item.roomId);
        return {
          roomId: item.roomId,
          role: item.role,
          joinedAt: item.joinedAt,
          roomType: room?.type ?? null,
          roomName: room?.name ?? null,
          createdTheRoom: room?.createdBy === userId,
        };
      });
    },
    erase: async ({ projectId, userId, actor }) => {
      const own = await memberships.membershipsOfUser(projectId, userId);
      const roomItems = await rooms.findRooms(
        projectId,
        own.map((item) => item.roomId),
      );
      await Promise.all(roomItems.map((room) => rooms.forgetRoomCreator(room, userId)));
      let ended = 0;
      // One at a time: each is a transaction with its event, and a user may be in many rooms.
      for (const item of own) if (await endMembership(projectId, item.roomId, userId, actor)) ended++;
      return ended;
    },
  },
  {
    // After `memberships`: a survey the CSAT subscriber makes while the subject is still a member is
    // deleted here, and once the memberships are gone it makes none. Tickets stay with the project's
    // support history, made anonymous: the requester becomes the
    // erased user and the subject (their words) goes; an erased agent leaves their tickets unassigned.
    id: 'support',
    export: async ({ projectId, userId }) => {
      const [requested, assigned, surveys] = await Promise.all([
        tickets.ticketsRequestedBy(projectId, userId),
        tickets.ticketsAssignedTo(projectId, userId),
        csat.surveysOfUser(projectId, userId),
      ]);
      return {
        ticketsRequested: requested.map(toTicket),
        ticketsAssigned: assigned.map(toTicket),
        satisfactionSurveys: surveys.map(toSurvey),
      };
    },
    erase: async ({ projectId, userId }) => {
      const [requested, assigned] = await Promise.all([
        tickets.ticketsRequestedBy(projectId, userId),
        tickets.ticketsAssignedTo(projectId, userId),
      ]);
      const changed = await Promise.all([
        ...requested.map((ticket) => tickets.forgetTicketRequester(projectId, ticket.ticketId, userId)),
        ...assigned.map((ticket) => tickets.forgetTicketAssignee(projectId, ticket.ticketId, userId)),
        cannedResponses.forgetCannedResponsesEditor(projectId, userId),
        businessHours.forgetBusinessHoursEditor(projectId, userId),
      ]);
      const surveys = await csat.deleteSurveysOfUser(projectId, userId);
      return changed.filter(Boolean).length + surveys;
    },
  },
  {
    id: 'notifications',
    export: async ({ projectId, userId }) => (await notifications.notificationsOfUser(projectId, userId)).map(toNotification),
    erase: ({ projectId, userId }) => notifications.deleteNotificationsOfUser(projectId, userId),
  },
  {
    id: 'activityFeed',
    export: async ({ projectId, userId }) => (await feed.feedEntriesOfUser(projectId, userId)).map(toFeedEntry),
    erase: ({ projectId, userId }) => feed.deleteFeedOfUser(projectId, userId),
  },
  {
    id: 'digest',
    export: async ({ projectId, userId }) => {
      const preference = await digestPreferences.findDigestPreference(projectId, userId);
      return {
        preferences: preference ? toDigestPreferences(preference) : null,
        deliveries: (await digestDeliveries.digestDeliveriesOf(projectId, userId)).map(({ pk: _pk, sk: _sk, ...delivery }) => delivery),
      };
    },
    erase: async ({ projectId, userId }) => {
      const [preference, deliveries] = await Promise.all([
        digestPreferences.findDigestPreference(projectId, userId),
        digestDeliveries.digestDeliveriesOf(projectId, userId),
      ]);
      await Promise.all([
        digestPreferences.deleteDigestPreference(projectId, userId),
        digestDeliveries.deleteDigestDeliveries(projectId, userId),
      ]);
      return (preference ? 1 : 0) + deliveries.length;
    },
  },
  {
    id: 'rateLimits',
    erase: async ({ projectId, userId }) => {
      const keys = userRateLimitKeys(userId);
      await Promise.all(keys.map(({ bucket, key }) => rateLimits.deleteRateLimitWindows(projectId, bucket, key)));
      return 0;
    },
  },
  {
    id: 'credentials',
    export: async ({ projectId, userId }) => {
      const found = await credentials.findUserCredentials(projectId, userId);
      // Metadata only: the hash never leaves the table.
      return found ? { hasPassword: true, roles: found.roles, updatedAt: found.updatedAt } : null;
    },
    erase: async ({ projectId, userId }) => {
      const found = await credentials.findUserCredentials(projectId, userId);
      await credentials.deleteUserCredentials(projectId, userId);
      await clearSignInFailures(projectId, userId);
      return found ? 1 : 0;
    },
  },
  {
    id: 'stagedExports',
    erase: ({ projectId, userId }) => exports.deleteSubjectExports(projectId, userId),
  },
];
