import { askAi, bulletLines, conversation, isAiConfigured } from '#domain/ai/assistant';
import { sendableWebSubscriptions, sendWebNotice } from '#domain/push/send';
import { boundIfSet } from '#shared/bindings';
import { config } from '#shared/config';
import { claimDigestDelivery, type DigestChannel, releaseDigestDelivery } from '#shared/db/digest-delivery';
import { type DigestPreferenceItem, findDigestPreferences, recordDigestWindow } from '#shared/db/digest-preference';
import { userRoomIdsPage } from '#shared/db/membership';
import { roomMessagesBetween } from '#shared/db/message';
import { findRoom } from '#shared/db/room';
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

/** The window of this date: a second run of a date reads the first run's, a new date starts where the last ended. */
async function windowOf(job: DigestJob, preference: DigestPreferenceItem): Promise<string> {
  const last = preference.lastDigest;
  if (last && last.date >= job.digestDate) return last.since;
  const since = last?.at ?? new Date(job.now.getTime() - DAY_MS).toISOString();
  await recordDigestWindow(job.projectId, preference.userId, { date: job.digestDate, since, at: job.now.toISOString() });
  return since;
}

/** One user's digest: the channels delivered now (none when nothing happened in their rooms). */
async function deliverDigest(job: DigestJob, preference: DigestPreferenceItem): Promise<DigestChannel[]> {
  const { projectId } = job;
  const { userId } = preference;
  const since = await windowOf(job, preference);
  const { roomIds } = await userRoomIdsPage(projectId, userId, { limit: config.DIGEST_MAX_ROOMS });
  const rooms: RoomDigest[] = [];
  for (const activity of await Promise.all(roomIds.map((roomId) => job.roomActivity(roomId)))) {
    if (!activity) continue;
    const room = roomDigestOf(activity, since, userId);
    if (room.messageCount === 0) continue;
    const summary = await job.summary(activity, since);
    rooms.push(summary ? { ...room, summary } : room);
  }
  if (rooms.length === 0) return [];
  const content: DigestContent = { digestDate: job.digestDate, since, rooms };

  const delivered: DigestChannel[] = [];
  const once = async (channel: DigestChannel, send: () => Promise<void>) => {
    if (!(await claimDigestDelivery(projectId, userId, job.digestDate, channel, job.now))) return;
    try {
      await send();
    } catch (error) {
      await releaseDigestDelivery(projectId, userId, job.digestDate, channel).catch((releaseError: unknown) =>
        logger.error('digest.release_failed', { projectId, userId, channel, error: releaseError as Error }),
      );
      throw error;
    }
    delivered.push(channel);
  };

  if (preference.inAppEnabled) await once('in_app', () => notifyInApp(projectId, userId, content, job.now));
  if (preference.webPushEnabled) {
    const subscriptions = await sendableWebSubscriptions(projectId, userId);
    // A browser that refuses is the subscription's problem (counted against its gate), not a reason to send again.
    if (subscriptions.length > 0) {
      await once('web_push', async () => {
        await sendWebNotice(projectId, userId, subscriptions, {
          type: 'digest',
          projectId,
          digestDate: job.digestDate,
          title: digestTitle(content),
          body: digestSummaryLines(content).slice(0, 1000),
        });
      });
    }
  }
  const from = boundIfSet('email:digest');
  const apiUrl = boundIfSet('link:api');
  if (preference.emailEnabled && preference.email && from && apiUrl) {
    const to = preference.email;
    await once('email', async () => {
      const unsubscribeUrl = `${apiUrl.replace(/\/+$/, '')}/digest/unsubscribe?token=${await unsubscribeToken(projectId, userId)}`;
      const email = renderDigestEmail(content, unsubscribeUrl);
      await sendEmail({ from, to, ...email, headers: { 'List-Unsubscribe': `<${unsubscribeUrl}>` } });
    });
  }
  return delivered;
}
