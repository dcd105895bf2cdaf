import { DeleteCommand, GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { syncRosters, userTargets } from '#domain/push/rosters';
import { db, tableName } from '#shared/db/client';
import {
  bumpTargetsVersion,
  type DeviceItem,
  type DevicePlatform,
  deviceKey,
  MAX_TARGETS_PER_KIND,
  type PushTarget,
  SUBSCRIPTION_ID_PATTERN,
  targetIdFor,
  targetOf,
  targetOwnerKey,
  WEB_PUSH_FAILURE_GATE,
  type WebSubscriptionItem,
  webSubscriptionItem,
  webSubscriptionKey,
} from '#shared/db/push';
import { isConditionFailure } from '#shared/db/transact';
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

const targetItems = async (projectId: string, userId: string) => (await userTargets(projectId, userId)).items;

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
async function claimTarget(
  projectId: string,
  userId: string,
  target: { readonly id: string; readonly kind: 'device' | 'web'; readonly item: Record<string, unknown> },
): Promise<{ created: boolean }> {
  const keyOf = (holder: string) =>
    target.kind === 'device' ? deviceKey(projectId, holder, target.id) : webSubscriptionKey(projectId, holder, target.id);
  const ownerKey = targetOwnerKey(projectId, target.id);
  for (let attempt = 1; ; attempt++) {
    const { Item: owner } = await db.send(new GetCommand({ TableName: tableName, Key: ownerKey, ConsistentRead: true }));
    const previous = owner?.userId === undefined ? undefined : String(owner.userId);
    const handedOver = previous !== undefined && previous !== userId;
    try {
      await db.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: tableName, Item: target.item } },
            {
              Put: {
                TableName: tableName,
                Item: { ...ownerKey, userId },
                // Written over the holder just read, so of concurrent registrations each sees a consistent handover.
                ...(previous === undefined
                  ? { ConditionExpression: 'attribute_not_exists(pk)' }
                  : { ConditionExpression: 'userId = :previous', ExpressionAttributeValues: { ':previous': previous } }),
              },
            },
            bumpTargetsVersion(projectId, userId, tableName),
            ...(handedOver
              ? [{ Delete: { TableName: tableName, Key: keyOf(previous) } }, bumpTargetsVersion(projectId, previous, tableName)]
              : []),
          ],
        }),
      );
    } catch (error) {
      // Another registration of the same target won the race: read the new holder and go again.
      if (!isConditionFailure(error)) throw error;
      if (attempt === 3) throw new ConflictError('target_busy', 'The token or endpoint kept changing hands during the request; try again');
      continue;
    }
    if (previous !== userId) await releaseOldest(projectId, userId, target.kind);
    if (handedOver) await syncRosters(projectId, previous);
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
    await deleteTarget(projectId, userId, targetOf(oldest));
  }
}

/**
 * A target registered again as it stands (apps and browsers do it on every start): only its row
 * is touched, conditionally on the fields the roster copies hold being unchanged, so there is no
 * version bump and no write in each of the user's rooms. False when the row changed or went
 * meanwhile (a handover, a release): the caller claims the target as new.
 */
async function touchUnchanged(
  key: Record<string, string>,
  unchanged: Readonly<Record<string, string>>,
  set: Readonly<Record<string, string | undefined>>,
): Promise<boolean> {
  const names: Record<string, string> = {};
  const values: Record<string, string> = {};
  const conditions = ['attribute_exists(pk)'];
  for (const [field, value] of Object.entries(unchanged)) {
    names[`#${field}`] = field;
    values[`:${field}`] = value;
    conditions.push(`#${field} = :${field}`);
  }
  const sets: string[] = [];
  const removes: string[] = [];
  for (const [field, value] of Object.entries(set)) {
    names[`#${field}`] = field;
    if (value === undefined) {
      removes.push(`#${field}`);
      continue;
    }
    values[`:${field}`] = value;
    sets.push(`#${field} = :${field}`);
  }
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: key,
        UpdateExpression: [sets.length ? `SET ${sets.join(', ')}` : '', removes.length ? `REMOVE ${removes.join(', ')}` : '']
          .join(' ')
          .trim(),
        ConditionExpression: conditions.join(' AND '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

export async function registerDevice(projectId: string, userId: string, input: { platform: DevicePlatform; token: string }) {
  const deviceId = targetIdFor('device', projectId, input.token);
  const key = deviceKey(projectId, userId, deviceId);
  const { Item: existing } = await db.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
  const now = new Date().toISOString();
  const item: DeviceItem = {
    ...key,
    projectId,
    userId,
    deviceId,
    platform: input.platform,
    token: input.token,
    createdAt: existing ? String(existing.createdAt) : now,
    updatedAt: now,
  };
  if (
    existing?.platform === input.platform &&
    (await touchUnchanged(key, { platform: input.platform, token: input.token }, { updatedAt: now }))
  ) {
    return { device: toDevice(item), created: false };
  }
  const { created } = await claimTarget(projectId, userId, { id: deviceId, kind: 'device', item });
  return { device: toDevice(item), created };
}

export async function deleteDevice(projectId: string, userId: string, deviceId: string): Promise<void> {
  await releaseTarget(projectId, userId, deviceId, deviceKey(projectId, userId, deviceId), 'device_not_found', 'Device not found');
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
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
  const existing = Item ? webSubscriptionItem.parse(Item) : undefined;
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
  if (
    sameKeys &&
    (await touchUnchanged(key, { endpoint: item.endpoint, p256dh: item.p256dh, auth: item.auth }, { userAgent: item.userAgent }))
  ) {
    return { subscription: toWebSubscription(item), created: false };
  }
  const { created } = await claimTarget(projectId, userId, { id: subscriptionId, kind: 'web', item });
  return { subscription: toWebSubscription(item), created };
}

/** By id (`ws_...`) or by the endpoint itself, which is how a browser knows its subscription. */
export async function unsubscribeWebPush(projectId: string, userId: string, idOrEndpoint: string): Promise<void> {
  // Endpoints are stored as the URL parser spells them (`subscribe.ts`), so the name given is spelled the same way first.
  const subscriptionId = SUBSCRIPTION_ID_PATTERN.test(idOrEndpoint)
    ? idOrEndpoint
    : targetIdFor('web', projectId, parseClientUrl(idOrEndpoint)?.href ?? idOrEndpoint);
  await releaseTarget(
    projectId,
    userId,
    subscriptionId,
    webSubscriptionKey(projectId, userId, subscriptionId),
    'subscription_not_found',
    'Web push subscription not found',
  );
}

/** The caller's own row only: another user's or project's id is simply not found. */
async function releaseTarget(
  projectId: string,
  userId: string,
  targetId: string,
  key: Record<string, string>,
  code: string,
  message: string,
): Promise<void> {
  try {
    await db.send(
      new TransactWriteCommand({
        TransactItems: [
          { Delete: { TableName: tableName, Key: key, ConditionExpression: 'attribute_exists(pk)' } },
          {
            Delete: {
              TableName: tableName,
              Key: targetOwnerKey(projectId, targetId),
              ConditionExpression: 'attribute_not_exists(pk) OR userId = :me',
              ExpressionAttributeValues: { ':me': userId },
            },
          },
          bumpTargetsVersion(projectId, userId, tableName),
        ],
      }),
    );
  } catch (error) {
    // Only a failed condition means "not yours"; a conflict stays a retryable 5xx.
    if (isConditionFailure(error)) throw new NotFoundError(code, message);
    throw error;
  }
  await syncRosters(projectId, userId);
}

/** Deletes a target row with its holder record and moves the version on; no roster sync (the caller does one). */
async function deleteTarget(projectId: string, userId: string, target: PushTarget): Promise<void> {
  const key = target.kind === 'web' ? webSubscriptionKey(projectId, userId, target.id) : deviceKey(projectId, userId, target.id);
  await db.send(
    new TransactWriteCommand({
      TransactItems: [{ Delete: { TableName: tableName, Key: key } }, bumpTargetsVersion(projectId, userId, tableName)],
    }),
  );
  await db
    .send(
      new DeleteCommand({
        TableName: tableName,
        Key: targetOwnerKey(projectId, target.id),
        ConditionExpression: 'userId = :me',
        ExpressionAttributeValues: { ':me': userId },
      }),
    )
    .catch((error: unknown) => {
      // Claimed by someone else meanwhile: their holder record stays.
      if (!isConditionFailure(error)) throw error;
    });
}

/**
 * A provider said the target no longer exists (web push 404/410, FCM `UNREGISTERED`, APNs 410 or
 * `BadDeviceToken`): its row, its holder record and its roster copies go.
 */
export async function removeDeadTarget(projectId: string, userId: string, target: PushTarget): Promise<void> {
  await deleteTarget(projectId, userId, target);
  await syncRosters(projectId, userId);
}

/**
 * The spec's failure gate for one answer of a push service: 201/202 reset the count, a failure
 * adds one; at the gate the subscription leaves the rosters (it stays listed, inactive, until the
 * user unsubscribes and subscribes again). `lastSentAt` records the last accepted push.
 */
export async function recordWebPushOutcome(projectId: string, userId: string, subscriptionId: string, accepted: boolean): Promise<void> {
  const key = webSubscriptionKey(projectId, userId, subscriptionId);
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: key,
        ConditionExpression: 'attribute_exists(pk)',
        ...(accepted
          ? {
              UpdateExpression: 'SET failure_count = :zero, lastSentAt = :now',
              ExpressionAttributeValues: { ':zero': 0, ':now': new Date().toISOString() },
            }
          : { UpdateExpression: 'ADD failure_count :one', ExpressionAttributeValues: { ':one': 1 } }),
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    // At the gate and past it (a push already in flight, or a sync that failed the first time).
    if (!accepted && Number(Attributes?.failure_count) >= WEB_PUSH_FAILURE_GATE) {
      await db.send(new UpdateCommand(bumpTargetsVersion(projectId, userId, tableName).Update));
      await syncRosters(projectId, userId);
    }
  } catch (error) {
    // Unsubscribed while the push was in flight: nothing left to count.
    if (!isConditionFailure(error)) throw error;
  }
}

export async function recordDeviceSent(projectId: string, userId: string, deviceId: string): Promise<void> {
  await db
    .send(
      new UpdateCommand({
        TableName: tableName,
        Key: deviceKey(projectId, userId, deviceId),
        ConditionExpression: 'attribute_exists(pk)',
        UpdateExpression: 'SET lastSentAt = :now',
        ExpressionAttributeValues: { ':now': new Date().toISOString() },
      }),
    )
    .catch((error: unknown) => {
      if (!isConditionFailure(error)) throw error;
    });
}
