import { askAi, bulletLines, conversation, isAiConfigured } from '#domain/ai/assistant';
import { sendableWebSubscriptions, sendWebNotice } from '#domain/push/send';
import { boundIfSet } from '#shared/bindings';
import { config } from '#shared/config';
import {
  claimDigestDelivery,
  claimDigestDeliveryPart,
  DIGEST_CHANNELS,
  type DigestChannel,
  releaseDigestDelivery,
} from '#shared/db/digest-delivery';
import {
  type DigestPreferenceItem,
  type DigestWindow,
  findDigestPreferences,
  recordDigestWindow,
  recordDigestWindowPart,
} from '#shared/db/digest-preference';
import { userRoomIdsPage } from '#shared/db/membership';
import { roomMessagesBetween } from '#shared/db/message';
import { findRoom } from '#shared/db/room';
import { isConditionFailure, transactWrite } from '#shared/db/transact';
import { logger } from '#shared/logger';
import { countMetric } from '#shared/metrics';
import { sendEmail } from '#shared/providers/email';
import {
  type DigestContent,
  digestSummaryLines,
  digestTitle,
  type RoomActivity,
  type RoomDigest,
  renderDigestEmail,
  roomDigestOf,
} from './content';
import { notifyInApp } from './in-app';
import { unsubscribeToken } from './unsubscribe-link';

/** What one job of users came to, per channel delivered now, and users with nothing to tell or nothing enabled. */
export interface DigestJobResult {
  readonly users: number;
  readonly empty: number;
  readonly delivered: Record<DigestChannel, number>;
}

const DAY_MS = 86_400_000;

/**
 * Summaries by project, room and digest date, shared by the jobs an instance runs: one AI call per
 * room and date per instance, whatever the number of its members. A failed or refused call (no
 * quota) is kept as "no summary" for the date, so it is not asked again for every user.
 */
const summaries = new Map<string, Promise<string | undefined>>();
const MAX_SUMMARIES = 2000;

/** What the users of one job share: each room is read once, however many of them belong to it. */
class DigestJob {
  private readonly rooms = new Map<string, Promise<RoomActivity | undefined>>();

  constructor(
    readonly projectId: string,
    readonly digestDate: string,
    readonly now: Date,
  ) {}

  roomActivity(roomId: string): Promise<RoomActivity | undefined> {
    let activity = this.rooms.get(roomId);
    if (!activity) {
      activity = this.readRoom(roomId);
      this.rooms.set(roomId, activity);
    }
    return activity;
  }

  private async readRoom(roomId: string): Promise<RoomActivity | undefined> {
    const [room, newest] = await Promise.all([
      findRoom(this.projectId, roomId),
      roomMessagesBetween(this.projectId, roomId, { oldestFirst: false, limit: config.DIGEST_ROOM_MESSAGES }),
    ]);
    if (!room) return undefined;
    return { roomId, roomName: room.name ?? roomId, e2e: room.e2eEnabled, newest, capped: newest.length >= config.DIGEST_ROOM_MESSAGES };
  }

  summary(activity: RoomActivity, since: string): Promise<string | undefined> {
    if (activity.e2e || !isAiConfigured()) return Promise.resolve(undefined);
    const key = `${this.projectId}\u0000${activity.roomId}\u0000${this.digestDate}`;
    let summary = summaries.get(key);
    if (!summary) {
      if (summaries.size >= MAX_SUMMARIES) summaries.clear();
      summary = this.askSummary(activity, since);
      summaries.set(key, summary);
    }
    return summary;
  }

  private async askSummary(activity: RoomActivity, since: string): Promise<string | undefined> {
    const messages = activity.newest.filter((message) => message.createdAt > since).reverse();
    if (messages.length === 0) return undefined;
    try {
      const answer = await askAi(this.projectId, 'digest', [
        { role: 'system', content: 'You write the daily digest of a chat room. Answer with 1 to 4 short bullet lines starting with "- ".' },
        { role: 'user', content: `Messages of the day in "${activity.roomName}" (oldest first):\n${conversation(messages)}` },
      ]);
      return bulletLines(answer.content, 4);
    } catch (error) {
      // No quota left, or the provider failed: the digest goes out with counts and top messages.
      logger.warn('digest.summary_skipped', { projectId: this.projectId, roomId: activity.roomId, error: (error as Error).message });
      return undefined;
    }
  }
}

/**
 * Delivers the digest of `digestDate` to the users of one job (a queue message). Users whose
 * digest is off by now are passed over. Every user is tried; when any failed, the job throws after
 * the others are done, so the queue retries it, and the channels already delivered are not
 * delivered again (their claims stand).
 */
export async function deliverDigests(projectId: string, digestDate: string, userIds: readonly string[]): Promise<DigestJobResult> {
  const job = new DigestJob(projectId, digestDate, new Date());
  const preferences = (await findDigestPreferences(projectId, userIds)).filter((preference) => preference.enabled);
  const results = await Promise.allSettled(preferences.map((preference) => deliverDigest(job, preference)));
  const delivered: Record<DigestChannel, number> = { in_app: 0, web_push: 0, email: 0 };
  let empty = 0;
  const failures: unknown[] = [];
  for (const result of results) {
    if (result.status === 'rejected') failures.push(result.reason);
    else if (result.value.length === 0) empty++;
    else for (const channel of result.value) delivered[channel]++;
  }
  for (const [channel, count] of Object.entries(delivered)) if (count > 0) countMetric(`digest_${channel}`, count);
  if (failures.length > 0) throw new AggregateError(failures, `${failures.length} of ${preferences.length} digests failed`);
  return { users: preferences.length, empty, delivered };
}

/**
 * The window of this date: a second run of a date reads the first run's; a new date starts where
 * the last ended (or a day back), and is recorded with the first delivery's claims.
 */
function windowOf(job: DigestJob, preference: DigestPreferenceItem): { since: string; record?: DigestWindow } {
  const last = preference.lastDigest;
  if (last && last.date >= job.digestDate) return { since: last.since };
  const since = last?.at ?? new Date(job.now.getTime() - DAY_MS).toISOString();
  return { since, record: { date: job.digestDate, since, at: job.now.toISOString() } };
}

/**
 * Claims the channels, with the window, in one transaction: the first run of a date for a user
 * costs one request. When any part fails (a channel delivered by an earlier or concurrent run, the
 * window recorded by one), each is claimed on its own, and only the free ones are delivered.
 */
async function claim(job: DigestJob, userId: string, channels: readonly DigestChannel[], record?: DigestWindow): Promise<DigestChannel[]> {
  const { projectId, digestDate, now } = job;
  try {
    await transactWrite([
      ...(record ? [recordDigestWindowPart(projectId, userId, record)] : []),
      ...channels.map((channel) => claimDigestDeliveryPart(projectId, userId, digestDate, channel, now)),
    ]);
    return [...channels];
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
  if (record) await recordDigestWindow(projectId, userId, record);
  const free = await Promise.all(
    channels.map(async (channel) => ((await claimDigestDelivery(projectId, userId, digestDate, channel, now)) ? channel : undefined)),
  );
  return free.filter((channel): channel is DigestChannel => channel !== undefined);
}

/** One user's digest: the channels delivered now (none when nothing happened in their rooms). */
async function deliverDigest(job: DigestJob, preference: DigestPreferenceItem): Promise<DigestChannel[]> {
  const { projectId, digestDate } = job;
  const { userId } = preference;
  const { since, record } = windowOf(job, preference);
  const { roomIds } = await userRoomIdsPage(projectId, userId, { limit: config.DIGEST_MAX_ROOMS });
  const rooms: RoomDigest[] = [];
  for (const activity of await Promise.all(roomIds.map((roomId) => job.roomActivity(roomId)))) {
    if (!activity) continue;
    const room = roomDigestOf(activity, since, userId);
    if (room.messageCount === 0) continue;
    const summary = await job.summary(activity, since);
    rooms.push(summary ? { ...room, summary } : room);
  }
  // Nothing to tell: no delivery, and the window stays open until a digest goes out.
  if (rooms.length === 0) return [];
  const content: DigestContent = { digestDate, since, rooms };

  const subscriptions = preference.webPushEnabled ? await sendableWebSubscriptions(projectId, userId) : [];
  const from = boundIfSet('email:digest');
  const apiUrl = boundIfSet('link:api');
  const to = preference.emailEnabled && preference.email ? preference.email : undefined;
  const senders: Partial<Record<DigestChannel, () => Promise<void>>> = {};
  if (preference.inAppEnabled) senders.in_app = () => notifyInApp(projectId, userId, content, job.now);
  // A browser that refuses is the subscription's problem (counted against its gate), not a reason to send again.
  if (subscriptions.length > 0) {
    senders.web_push = async () => {
      await sendWebNotice(projectId, userId, subscriptions, {
        type: 'digest',
        projectId,
        digestDate,
        title: digestTitle(content),
        body: digestSummaryLines(content).slice(0, 1000),
      });
    };
  }
  if (to && from && apiUrl) {
    senders.email = async () => {
      const unsubscribeUrl = `${apiUrl.replace(/\/+$/, '')}/digest/unsubscribe?token=${await unsubscribeToken(projectId, userId)}`;
      await sendEmail({ from, to, ...renderDigestEmail(content, unsubscribeUrl), headers: { 'List-Unsubscribe': `<${unsubscribeUrl}>` } });
    };
  }
  const channels = DIGEST_CHANNELS.filter((channel) => senders[channel]);
  if (channels.length === 0) {
    if (record) await recordDigestWindow(projectId, userId, record);
    return [];
  }

  const claimed = await claim(job, userId, channels, record);
  const results = await Promise.allSettled(
    claimed.map(async (channel) => {
      try {
        await (senders[channel] as () => Promise<void>)();
        return channel;
      } catch (error) {
        // Given back, so the job's retry delivers it; the other channels keep their claims.
        await releaseDigestDelivery(projectId, userId, digestDate, channel).catch((releaseError: unknown) =>
          logger.error('digest.release_failed', { projectId, userId, channel, error: releaseError as Error }),
        );
        throw error;
      }
    }),
  );
  const failed = results.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  return results.map((result) => (result as PromiseFulfilledResult<DigestChannel>).value);
}
