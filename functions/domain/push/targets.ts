import { syncRosters } from '#domain/push/rosters';
import * as targets from '#shared/db/push';
import {
  type DeviceItem,
  type DevicePlatform,
  deviceKey,
  MAX_TARGETS_PER_KIND,
  type PushTarget,
  SUBSCRIPTION_ID_PATTERN,
  type TargetItem,
  targetIdFor,
  targetOf,
  WEB_PUSH_FAILURE_GATE,
  type WebSubscriptionItem,
  webSubscriptionKey,
} from '#shared/db/push';
import { ConflictError, NotFoundError } from '#shared/errors';
import { parseClientUrl } from '#shared/urls';

/**
 * A user's push targets: devices and web push subscriptions, each held by one user of a project at
 * a time, at most {@link MAX_TARGETS_PER_KIND} of each kind per user. Every change bumps the user's
 * targets version in the same write and re-syncs the roster copies (`./rosters.ts`).
 */

export function toDevice(item: DeviceItem) {
  return { id: item.deviceId, platform: item.platform, token: item.token, createdAt: item.createdAt, updatedAt: item.updatedAt };
}

/** The list shape of the spec: the endpoint masked (it is a bearer capability), its host shown. */
export function toWebSubscription(item: WebSubscriptionItem) {
  const endpoint = new URL(item.endpoint);
  const path = endpoint.pathname;
  return {
    id: item.subscriptionId,
    endpoint: `${endpoint.origin}${path.length > 12 ? `${path.slice(0, 8)}…${path.slice(-4)}` : '/…'}`,
    endpointHost: endpoint.host,
    userAgent: item.userAgent ?? null,
    failureCount: item.failure_count,
    failure_count: item.failure_count,
    active: item.failure_count < WEB_PUSH_FAILURE_GATE,
    lastSentAt: item.lastSentAt ?? null,
    createdAt: item.createdAt,
  };
}

const targetItems = async (projectId: string, userId: string) => (await targets.userTargets(projectId, userId)).items;

export async function listDevices(projectId: string, userId: string) {
  return (await targetItems(projectId, userId)).filter((item): item is DeviceItem => 'deviceId' in item).map(toDevice);
}

export async function listWebSubscriptions(projectId: string, userId: string) {
  return (await targetItems(projectId, userId))
    .filter((item): item is WebSubscriptionItem => 'subscriptionId' in item)
    .map(toWebSubscription);
}

/**
 * Writes a target row and makes the user its only holder: the row of a previous holder in the
 * same project goes in the same transaction, and both users' targets versions move on. Past
 * {@link MAX_TARGETS_PER_KIND} of the kind, the user's oldest is released. Returns whether the
 * user did not hold it before.
 */
async function claimTarget(projectId: string, userId: string, item: TargetItem): Promise<{ created: boolean }> {
  const target = targetOf(item);
  for (let attempt = 1; ; attempt++) {
    const previous = await targets.targetHolder(projectId, target.id);
    // Written over the holder just read, so of concurrent registrations each sees a consistent handover.
    if (!(await targets.claimTarget(projectId, userId, item, previous))) {
      // Another registration of the same target won the race: read the new holder and go again.
      if (attempt === 3) throw new ConflictError('target_busy', 'The token or endpoint kept changing hands during the request; try again');
      continue;
    }
    if (previous !== userId) await releaseOldest(projectId, userId, target.kind);
    if (previous !== undefined && previous !== userId) await syncRosters(projectId, previous);
    await syncRosters(projectId, userId);
    return { created: previous !== userId };
  }
}

/** Keeps a user at {@link MAX_TARGETS_PER_KIND} of a kind: browsers make new subscriptions and leave the old ones behind. */
async function releaseOldest(projectId: string, userId: string, kind: 'device' | 'web'): Promise<void> {
  const held = (await targetItems(projectId, userId))
    .filter((item) => ('deviceId' in item ? 'device' : 'web') === kind)
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  for (const oldest of held.slice(0, Math.max(held.length - MAX_TARGETS_PER_KIND, 0))) {
    const target = targetOf(oldest);
    // No roster sync here: the caller syncs once after the claim.
    await targets.deleteTarget(projectId, userId, target.kind, target.id);
  }
}

export async function registerDevice(projectId: string, userId: string, input: { platform: DevicePlatform; token: string }) {
  const deviceId = targetIdFor('device', projectId, input.token);
  const key = deviceKey(projectId, userId, deviceId);
  const existing = await targets.findDevice(projectId, userId, deviceId);
  const now = new Date().toISOString();
  const item: DeviceItem = {
    ...key,
    projectId,
    userId,
    deviceId,
    platform: input.platform,
    token: input.token,
    createdAt: existing?.createdAt ?? now,
    updatedAt: now,
  };
  // Registered again as it stands (apps do it on every start): only the row is touched, with no
  // version bump and no write in each of the user's rooms; a row that changed meanwhile is claimed anew.
  if (
    existing?.platform === input.platform &&
    (await targets.touchDevice(projectId, userId, deviceId, { platform: input.platform, token: input.token }, now))
  ) {
    return { device: toDevice(item), created: false };
  }
  const { created } = await claimTarget(projectId, userId, item);
  return { device: toDevice(item), created };
}

export async function deleteDevice(projectId: string, userId: string, deviceId: string): Promise<void> {
  await releaseTarget(projectId, userId, 'device', deviceId, 'device_not_found', 'Device not found');
}

/**
 * Subscribing the same endpoint again updates its keys and keeps its failure count: the spec's
 * gate holds "until unsubscribe then resubscribe", and browsers post their subscription again on
 * every page load. After an unsubscribe the row is new and starts at 0.
 */
export async function subscribeWebPush(
  projectId: string,
  userId: string,
  input: { endpoint: string; keys: { p256dh: string; auth: string }; userAgent?: string },
) {
  const subscriptionId = targetIdFor('web', projectId, input.endpoint);
  const key = webSubscriptionKey(projectId, userId, subscriptionId);
  const existing = await targets.findWebSubscription(projectId, userId, subscriptionId);
  const item: WebSubscriptionItem = {
    ...key,
    projectId,
    userId,
    subscriptionId,
    endpoint: input.endpoint,
    p256dh: input.keys.p256dh,
    auth: input.keys.auth,
    ...(input.userAgent === undefined ? {} : { userAgent: input.userAgent }),
    failure_count: existing?.failure_count ?? 0,
    createdAt: existing?.createdAt ?? new Date().toISOString(),
    ...(existing?.lastSentAt === undefined ? {} : { lastSentAt: existing.lastSentAt }),
  };
  const sameKeys = existing?.p256dh === item.p256dh && existing.auth === item.auth;
  // Posted again as it stands (browsers do it on every page load): only the row is touched.
  if (
    sameKeys &&
    (await targets.touchWebSubscription(
      projectId,
      userId,
      subscriptionId,
      { endpoint: item.endpoint, p256dh: item.p256dh, auth: item.auth },
      item.userAgent,
    ))
  ) {
    return { subscription: toWebSubscription(item), created: false };
  }
  const { created } = await claimTarget(projectId, userId, item);
  return { subscription: toWebSubscription(item), created };
}

/** By id (`ws_...`) or by the endpoint itself, which is how a browser knows its subscription. */
export async function unsubscribeWebPush(projectId: string, userId: string, idOrEndpoint: string): Promise<void> {
  // Endpoints are stored as the URL parser spells them (`subscribe.ts`), so the name given is spelled the same way first.
  const subscriptionId = SUBSCRIPTION_ID_PATTERN.test(idOrEndpoint)
    ? idOrEndpoint
    : targetIdFor('web', projectId, parseClientUrl(idOrEndpoint)?.href ?? idOrEndpoint);
  await releaseTarget(projectId, userId, 'web', subscriptionId, 'subscription_not_found', 'Web push subscription not found');
}

/** The caller's own row only: another user's or project's id is simply not found. */
async function releaseTarget(
  projectId: string,
  userId: string,
  kind: targets.TargetKind,
  targetId: string,
  code: 'device_not_found' | 'subscription_not_found',
  message: string,
): Promise<void> {
  // Only a failed condition means "not yours"; a conflict is retried, then stays a retryable 5xx.
  if (!(await targets.releaseTarget(projectId, userId, kind, targetId))) throw new NotFoundError(code, message);
  await syncRosters(projectId, userId);
}

/**
 * A provider said the target no longer exists (web push 404/410, FCM `UNREGISTERED`, APNs 410 or
 * `BadDeviceToken`): its row, its holder record and its roster copies go.
 */
export async function removeDeadTarget(projectId: string, userId: string, target: PushTarget): Promise<void> {
  await targets.deleteTarget(projectId, userId, target.kind, target.id);
  await syncRosters(projectId, userId);
}

/**
 * The spec's failure gate for one answer of a push service: 201/202 reset the count, a failure
 * adds one; at the gate the subscription leaves the rosters (it stays listed, inactive, until the
 * user unsubscribes and subscribes again). `lastSentAt` records the last accepted push.
 */
export async function recordWebPushOutcome(projectId: string, userId: string, subscriptionId: string, accepted: boolean): Promise<void> {
  const failures = await targets.countWebPushOutcome(projectId, userId, subscriptionId, accepted);
  // At the gate and past it (a push already in flight, or a sync that failed the first time).
  // `undefined`: unsubscribed while the push was in flight, nothing left to count.
  if (!accepted && failures !== undefined && failures >= WEB_PUSH_FAILURE_GATE) {
    await targets.bumpTargetsVersion(projectId, userId);
    await syncRosters(projectId, userId);
  }
}
