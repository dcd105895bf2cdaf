import { createHash } from 'node:crypto';
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { projectPk, userPk } from './keys';
import { queryAll } from './query';
import { isConditionFailure, type TransactPart, transactWrite } from './transact';

/**
 * Push targets (mobile devices and browser subscriptions) with their holder records and version.
 * The room rosters that find a message's recipients in one Query are in `./push-roster.ts`. The project's push
 * configuration is in `./push-config.ts`, its VAPID key pair in `./push-vapid.ts`, push records in
 * `./push-record.ts`. docs/data-model.md ("Push") has the access patterns.
 */

export const DEVICE_PLATFORMS = ['fcm', 'android', 'apns', 'ios'] as const;
export type DevicePlatform = (typeof DEVICE_PLATFORMS)[number];
/** `fcm`/`android` tokens go to FCM, `apns`/`ios` tokens to APNs. */
export const providerOf = (platform: DevicePlatform): 'fcm' | 'apns' => (platform === 'fcm' || platform === 'android' ? 'fcm' : 'apns');

/** The spec's failure gate: a subscription that failed this many times in a row is skipped. */
export const WEB_PUSH_FAILURE_GATE = 10;

/**
 * A target's id is derived from what identifies it at the provider (a device token, a subscription
 * endpoint), so registering the same one again updates its row instead of adding a second, and a
 * web subscription can be named by its endpoint as well as by its id.
 */
export function targetIdFor(kind: 'device' | 'web', projectId: string, value: string): string {
  const digest = createHash('sha256').update(`${projectId}\u0000${kind}\u0000${value}`).digest('base64url').slice(0, 22);
  return `${kind === 'device' ? 'pd' : 'ws'}_${digest.replace(/[-_]/g, 'x')}`;
}
export const DEVICE_ID_PATTERN = /^pd_[A-Za-z0-9]{22}$/;
export const SUBSCRIPTION_ID_PATTERN = /^ws_[A-Za-z0-9]{22}$/;

/** Every push target of a user, in one partition: the user's list routes and the roster sync read it with one Query. */
export const userPushPk = (projectId: string, userId: string) => `${userPk(projectId, userId)}#PUSH`;
export const DEVICE_SK_PREFIX = 'DEV#';
/**
 * The version of a user's targets, bumped by every change (a claim, a release, a dead target, the
 * failure gate) in the same write: roster copies carry the version they were made from, and a copy
 * made from an older version never overwrites a newer one.
 */
export const targetsVersionKey = (projectId: string, userId: string) => ({ pk: userPushPk(projectId, userId), sk: 'VERSION' });
const versionBump = (projectId: string, userId: string) => ({
  TableName: tableName,
  Key: targetsVersionKey(projectId, userId),
  UpdateExpression: 'ADD v :one',
  ExpressionAttributeValues: { ':one': 1 },
});
const bumpTargetsVersionPart = (projectId: string, userId: string): TransactPart => ({ Update: versionBump(projectId, userId) });
/** Devices and web push subscriptions a user may hold each; a new one beyond it replaces the oldest. */
export const MAX_TARGETS_PER_KIND = 10;
export const WEB_SK_PREFIX = 'WEB#';
export const deviceKey = (projectId: string, userId: string, deviceId: string) => ({
  pk: userPushPk(projectId, userId),
  sk: `${DEVICE_SK_PREFIX}${deviceId}`,
});
export const webSubscriptionKey = (projectId: string, userId: string, subscriptionId: string) => ({
  pk: userPushPk(projectId, userId),
  sk: `${WEB_SK_PREFIX}${subscriptionId}`,
});

/**
 * Who holds a target: a device token or endpoint belongs to one user of a project at a time, so
 * when a phone or browser changes hands the previous user's row goes and their notifications stop
 * reaching the new holder.
 */
export const targetOwnerKey = (projectId: string, targetId: string) => ({
  pk: `${projectPk(projectId)}#PUSHOWNER#${targetId}`,
  sk: 'OWNER',
});

export const deviceItem = z.object({
  pk: z.string(),
  sk: z.string(),
  projectId: z.string(),
  userId: z.string(),
  deviceId: z.string(),
  platform: z.enum(DEVICE_PLATFORMS),
  token: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  lastSentAt: z.optional(z.string()),
});
export type DeviceItem = z.infer<typeof deviceItem>;

export const webSubscriptionItem = z.object({
  pk: z.string(),
  sk: z.string(),
  projectId: z.string(),
  userId: z.string(),
  subscriptionId: z.string(),
  endpoint: z.string(),
  p256dh: z.string(),
  auth: z.string(),
  userAgent: z.optional(z.string()),
  failure_count: z.number().check(z.int()),
  createdAt: z.string(),
  lastSentAt: z.optional(z.string()),
});
export type WebSubscriptionItem = z.infer<typeof webSubscriptionItem>;

/** What a sender needs of one target, copied into the rosters of the user's rooms. */
export const pushTarget = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('web'), id: z.string(), endpoint: z.string(), p256dh: z.string(), auth: z.string() }),
  z.object({ kind: z.literal('device'), id: z.string(), platform: z.enum(DEVICE_PLATFORMS), token: z.string() }),
]);
export type PushTarget = z.infer<typeof pushTarget>;

export function targetOf(item: DeviceItem | WebSubscriptionItem): PushTarget {
  return 'deviceId' in item
    ? { kind: 'device', id: item.deviceId, platform: item.platform, token: item.token }
    : { kind: 'web', id: item.subscriptionId, endpoint: item.endpoint, p256dh: item.p256dh, auth: item.auth };
}

export type TargetKind = 'device' | 'web';
export type TargetItem = DeviceItem | WebSubscriptionItem;

export const targetKey = (kind: TargetKind, projectId: string, userId: string, targetId: string) =>
  kind === 'device' ? deviceKey(projectId, userId, targetId) : webSubscriptionKey(projectId, userId, targetId);

export async function findDevice(projectId: string, userId: string, deviceId: string): Promise<DeviceItem | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: deviceKey(projectId, userId, deviceId), ConsistentRead: true }),
  );
  return Item ? deviceItem.parse(Item) : undefined;
}

export async function findWebSubscription(
  projectId: string,
  userId: string,
  subscriptionId: string,
): Promise<WebSubscriptionItem | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: webSubscriptionKey(projectId, userId, subscriptionId), ConsistentRead: true }),
  );
  return Item ? webSubscriptionItem.parse(Item) : undefined;
}

/** The user holding a target now (consistent), `undefined` when nobody does. */
export async function targetHolder(projectId: string, targetId: string): Promise<string | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: targetOwnerKey(projectId, targetId), ConsistentRead: true }));
  return Item?.userId === undefined ? undefined : String(Item.userId);
}

/**
 * Writes a target row and makes `userId` its holder, in one transaction conditional on the holder
 * still being `previousHolder` (as just read): a previous holder's row goes in the same write, and
 * both users' targets versions move on. False when the holder changed meanwhile (another
 * registration of the same token or endpoint won the race).
 */
export async function claimTarget(
  projectId: string,
  userId: string,
  item: TargetItem,
  previousHolder: string | undefined,
): Promise<boolean> {
  const target = targetOf(item);
  const ownerKey = targetOwnerKey(projectId, target.id);
  const handedOver = previousHolder !== undefined && previousHolder !== userId;
  try {
    await transactWrite([
      { Put: { TableName: tableName, Item: item } },
      {
        Put: {
          TableName: tableName,
          Item: { ...ownerKey, userId },
          ...(previousHolder === undefined
            ? { ConditionExpression: 'attribute_not_exists(pk)' }
            : { ConditionExpression: 'userId = :previous', ExpressionAttributeValues: { ':previous': previousHolder } }),
        },
      },
      bumpTargetsVersionPart(projectId, userId),
      ...(handedOver
        ? [
            { Delete: { TableName: tableName, Key: targetKey(target.kind, projectId, previousHolder, target.id) } },
            bumpTargetsVersionPart(projectId, previousHolder),
          ]
        : []),
    ]);
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/**
 * Updates a target row only while the fields its roster copies hold are unchanged: no version bump,
 * so a target registered again as it stands costs one write. `undefined` in `set` removes the field.
 * False when the row changed or went meanwhile.
 */
async function touchIfUnchanged(
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

/** Sets `updatedAt` of a device whose platform and token are as given; false when they are not (or it went). */
export const touchDevice = (
  projectId: string,
  userId: string,
  deviceId: string,
  unchanged: { readonly platform: DevicePlatform; readonly token: string },
  updatedAt: string,
) => touchIfUnchanged(deviceKey(projectId, userId, deviceId), unchanged, { updatedAt });

/** Sets (or removes) `userAgent` of a subscription whose endpoint and keys are as given; false when they are not (or it went). */
export const touchWebSubscription = (
  projectId: string,
  userId: string,
  subscriptionId: string,
  unchanged: { readonly endpoint: string; readonly p256dh: string; readonly auth: string },
  userAgent: string | undefined,
) => touchIfUnchanged(webSubscriptionKey(projectId, userId, subscriptionId), unchanged, { userAgent });

/**
 * The user's own target row, its holder record (unless another user holds it now) and a version
 * bump, all or nothing. False when the user holds no such row (another user's or project's id).
 */
export async function releaseTarget(projectId: string, userId: string, kind: TargetKind, targetId: string): Promise<boolean> {
  try {
    await transactWrite([
      { Delete: { TableName: tableName, Key: targetKey(kind, projectId, userId, targetId), ConditionExpression: 'attribute_exists(pk)' } },
      {
        Delete: {
          TableName: tableName,
          Key: targetOwnerKey(projectId, targetId),
          ConditionExpression: 'attribute_not_exists(pk) OR userId = :me',
          ExpressionAttributeValues: { ':me': userId },
        },
      },
      bumpTargetsVersionPart(projectId, userId),
    ]);
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Deletes a target row with a version bump, then its holder record unless someone else claimed it meanwhile. */
export async function deleteTarget(projectId: string, userId: string, kind: TargetKind, targetId: string): Promise<void> {
  await transactWrite([
    { Delete: { TableName: tableName, Key: targetKey(kind, projectId, userId, targetId) } },
    bumpTargetsVersionPart(projectId, userId),
  ]);
  await db
    .send(
      new DeleteCommand({
        TableName: tableName,
        Key: targetOwnerKey(projectId, targetId),
        ConditionExpression: 'userId = :me',
        ExpressionAttributeValues: { ':me': userId },
      }),
    )
    .catch((error: unknown) => {
      if (!isConditionFailure(error)) throw error;
    });
}

/** Moves the user's targets version on without another change (a subscription reached the failure gate). */
export async function bumpTargetsVersion(projectId: string, userId: string): Promise<void> {
  await db.send(new UpdateCommand(versionBump(projectId, userId)));
}

/**
 * One push service answer on a subscription: accepted resets `failure_count` and sets
 * `lastSentAt`, refused adds one. The count after the write, or `undefined` when the subscription
 * is gone (unsubscribed while the push was in flight).
 */
export async function countWebPushOutcome(
  projectId: string,
  userId: string,
  subscriptionId: string,
  accepted: boolean,
): Promise<number | undefined> {
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: webSubscriptionKey(projectId, userId, subscriptionId),
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
    return Number(Attributes?.failure_count);
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** Sets a device's `lastSentAt`; a device removed meanwhile is left gone. */
export async function markDeviceSent(projectId: string, userId: string, deviceId: string): Promise<void> {
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

export interface UserTargets {
  readonly items: readonly (DeviceItem | WebSubscriptionItem)[];
  readonly version: number;
}

/**
 * What a roster entry is made of: the user's targets and their version, read together with one
 * consistent Query of the user's push partition.
 */
export async function userTargets(projectId: string, userId: string): Promise<UserTargets> {
  const raw = await queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': userPushPk(projectId, userId) },
    ConsistentRead: true,
  });
  let version = 0;
  const items = raw.flatMap((item): (DeviceItem | WebSubscriptionItem)[] => {
    const sk = String(item.sk);
    if (sk.startsWith(DEVICE_SK_PREFIX)) return [deviceItem.parse(item)];
    if (sk.startsWith(WEB_SK_PREFIX)) return [webSubscriptionItem.parse(item)];
    if (sk === 'VERSION') version = Number(item.v ?? 0);
    return [];
  });
  return { items, version };
}

/** Deletes the user's targets version item: the last of their push partition, once the targets are gone. */
export async function deleteTargetsVersion(projectId: string, userId: string): Promise<void> {
  await db.send(new DeleteCommand({ TableName: tableName, Key: targetsVersionKey(projectId, userId) }));
}
