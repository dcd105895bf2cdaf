import { DeleteCommand, GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { deleteAll, putAll } from '#shared/db/batch';
import { db, isConditionFailure, tableName } from '#shared/db/client';
import { userRoomsIndexKey } from '#shared/db/membership';
import {
  DEVICE_SK_PREFIX,
  type DeviceItem,
  type DevicePlatform,
  deviceItem,
  deviceKey,
  type PushTarget,
  rosterKey,
  SUBSCRIPTION_ID_PATTERN,
  targetIdFor,
  targetOf,
  targetOwnerKey,
  userPushPk,
  WEB_PUSH_FAILURE_GATE,
  WEB_SK_PREFIX,
  type WebSubscriptionItem,
  webSubscriptionItem,
  webSubscriptionKey,
} from '#shared/db/push';
import { queryAll } from '#shared/db/query';
import { ConflictError, NotFoundError } from '#shared/errors';
import { parseClientUrl } from '#shared/urls';

/**
 * A user's push targets (devices and web push subscriptions) and the copies of them in the push
 * rosters of the user's rooms. A target changes rarely and a message is sent often, so the cost
 * sits on the change: every change re-writes the user's roster entries, and a message finds all
 * its recipients in one Query (`functions/domain/push/recipients.ts`).
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

async function targetItems(projectId: string, userId: string): Promise<(DeviceItem | WebSubscriptionItem)[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': userPushPk(projectId, userId) },
    ConsistentRead: true,
  });
  return items.flatMap((raw): (DeviceItem | WebSubscriptionItem)[] => {
    const sk = String(raw.sk);
    if (sk.startsWith(DEVICE_SK_PREFIX)) return [deviceItem.parse(raw)];
    if (sk.startsWith(WEB_SK_PREFIX)) return [webSubscriptionItem.parse(raw)];
    return [];
  });
}

export async function listDevices(projectId: string, userId: string) {
  return (await targetItems(projectId, userId)).filter((item): item is DeviceItem => 'deviceId' in item).map(toDevice);
}

export async function listWebSubscriptions(projectId: string, userId: string) {
  return (await targetItems(projectId, userId))
    .filter((item): item is WebSubscriptionItem => 'subscriptionId' in item)
    .map(toWebSubscription);
}

/** The targets a message may be sent to: every device, and the subscriptions the failure gate has not closed. */
async function sendableTargets(projectId: string, userId: string): Promise<PushTarget[]> {
  return (await targetItems(projectId, userId))
    .filter((item) => !('failure_count' in item) || item.failure_count < WEB_PUSH_FAILURE_GATE)
    .map(targetOf);
}

async function roomsOf(projectId: string, userId: string): Promise<string[]> {
  const memberships = await queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': userRoomsIndexKey(projectId, userId) },
    ProjectionExpression: 'roomId',
  });
  return memberships.map((item) => String(item.roomId));
}

/**
 * Re-writes the user's entry in the roster of every room they belong to from their current
 * targets (removing it when none is left to send to). Idempotent, so every change of a target
 * calls it, and a change that races a join is repaired by the join's own roster write.
 */
export async function syncRosters(projectId: string, userId: string): Promise<void> {
  const [targets, rooms] = await Promise.all([sendableTargets(projectId, userId), roomsOf(projectId, userId)]);
  if (targets.length === 0) await deleteAll(rooms.map((roomId) => rosterKey(projectId, roomId, userId)));
  else await putAll(rooms.map((roomId) => ({ ...rosterKey(projectId, roomId, userId), userId, targets })));
}

/** A new member's roster entry: one consistent Query of their targets, one write if they have any. */
export async function joinRosters(projectId: string, roomId: string, userIds: readonly string[]): Promise<void> {
  const entries = await Promise.all(userIds.map(async (userId) => ({ userId, targets: await sendableTargets(projectId, userId) })));
  await putAll(
    entries.filter((entry) => entry.targets.length > 0).map((entry) => ({ ...rosterKey(projectId, roomId, entry.userId), ...entry })),
  );
}

export async function leaveRoster(projectId: string, roomId: string, userId: string): Promise<void> {
  await db.send(new DeleteCommand({ TableName: tableName, Key: rosterKey(projectId, roomId, userId) }));
}

/**
 * Writes a target row and makes the user its only holder: the row of a previous holder in the
 * same project goes in the same transaction. Returns the previous holder (to re-sync their
 * rosters) and whether this user already held it.
 */
async function claimTarget(
  projectId: string,
  userId: string,
  targetId: string,
  item: Record<string, unknown>,
  keyOf: (holder: string) => Record<string, string>,
): Promise<{ created: boolean }> {
  const ownerKey = targetOwnerKey(projectId, targetId);
  for (let attempt = 1; ; attempt++) {
    const { Item: owner } = await db.send(new GetCommand({ TableName: tableName, Key: ownerKey, ConsistentRead: true }));
    const previous = owner?.userId === undefined ? undefined : String(owner.userId);
    try {
      await db.send(
        new TransactWriteCommand({
          TransactItems: [
            { Put: { TableName: tableName, Item: item } },
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
            ...(previous !== undefined && previous !== userId ? [{ Delete: { TableName: tableName, Key: keyOf(previous) } }] : []),
          ],
        }),
      );
    } catch (error) {
      // Another registration of the same target won the race: read the new holder and go again.
      if (!isConditionFailure(error)) throw error;
      if (attempt === 3) throw new ConflictError('target_busy', 'The token or endpoint kept changing hands during the request; try again');
      continue;
    }
    if (previous !== undefined && previous !== userId) await syncRosters(projectId, previous);
    await syncRosters(projectId, userId);
    return { created: previous !== userId };
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
  const { created } = await claimTarget(projectId, userId, deviceId, item, (holder) => deviceKey(projectId, holder, deviceId));
  return { device: toDevice(item), created };
}

export async function deleteDevice(projectId: string, userId: string, deviceId: string): Promise<void> {
  await releaseTarget(projectId, userId, deviceId, deviceKey(projectId, userId, deviceId), 'device_not_found', 'Device not found');
}

export async function subscribeWebPush(
  projectId: string,
  userId: string,
  input: { endpoint: string; keys: { p256dh: string; auth: string }; userAgent?: string },
) {
  const subscriptionId = targetIdFor('web', projectId, input.endpoint);
  // A fresh row each time: subscribing again is how a user re-opens a subscription the failure gate closed.
  const item: WebSubscriptionItem = {
    ...webSubscriptionKey(projectId, userId, subscriptionId),
    projectId,
    userId,
    subscriptionId,
    endpoint: input.endpoint,
    p256dh: input.keys.p256dh,
    auth: input.keys.auth,
    ...(input.userAgent === undefined ? {} : { userAgent: input.userAgent }),
    failure_count: 0,
    createdAt: new Date().toISOString(),
  };
  const { created } = await claimTarget(projectId, userId, subscriptionId, item, (holder) =>
    webSubscriptionKey(projectId, holder, subscriptionId),
  );
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

/** Deletes the caller's own row only: another user's or project's id is simply not found. */
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
        ],
      }),
    );
  } catch (error) {
    if (isTransactionConditionFailure(error)) throw new NotFoundError(code, message);
    throw error;
  }
  await syncRosters(projectId, userId);
}

function isTransactionConditionFailure(error: unknown): boolean {
  return (
    isConditionFailure(error) ||
    (error instanceof Error &&
      error.name === 'TransactionCanceledException' &&
      'CancellationReasons' in error &&
      Array.isArray(error.CancellationReasons) &&
      error.CancellationReasons.some((reason: { Code?: string }) => reason?.Code === 'ConditionalCheckFailed'))
  );
}

/**
 * A provider said the target no longer exists (web push 404/410, FCM `UNREGISTERED`, APNs 410 or
 * `BadDeviceToken`): its row, its holder record and its roster copies go.
 */
export async function removeDeadTarget(projectId: string, userId: string, target: PushTarget): Promise<void> {
  const key = target.kind === 'web' ? webSubscriptionKey(projectId, userId, target.id) : deviceKey(projectId, userId, target.id);
  await db.send(new DeleteCommand({ TableName: tableName, Key: key }));
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
      if (!isConditionFailure(error)) throw error;
    });
  await syncRosters(projectId, userId);
}

/**
 * The spec's failure gate for one answer of a push service: 2xx resets the count, a failure adds
 * one; reaching the gate takes the subscription out of the rosters (it stays listed, inactive,
 * until the user subscribes again). `lastSentAt` records the last accepted push.
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
    if (!accepted && Attributes?.failure_count === WEB_PUSH_FAILURE_GATE) await syncRosters(projectId, userId);
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
