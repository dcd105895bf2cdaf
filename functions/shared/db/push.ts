import { createHash } from 'node:crypto';
import * as z from '#shared/schema';
import { projectPk, userPk } from './keys';

/**
 * Push targets (mobile devices and browser subscriptions), the room rosters that find a message's
 * recipients in one Query, the project's push configuration and VAPID key pair, and push records.
 * docs/data-model.md ("Push") has the access patterns.
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
export const bumpTargetsVersion = (projectId: string, userId: string, tableName: string) => ({
  Update: {
    TableName: tableName,
    Key: targetsVersionKey(projectId, userId),
    UpdateExpression: 'ADD v :one',
    ExpressionAttributeValues: { ':one': 1 },
  },
});
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

/** The project's push configurations (one per environment) and its VAPID key pair share a partition. */
export const pushConfigPk = (projectId: string) => `${projectPk(projectId)}#PUSHCFG`;
export const PUSH_CONFIG_SK_PREFIX = 'ENV#';
export const pushConfigKey = (projectId: string, environment: string) => ({
  pk: pushConfigPk(projectId),
  sk: `${PUSH_CONFIG_SK_PREFIX}${environment}`,
});
export const vapidKey = (projectId: string) => ({ pk: pushConfigPk(projectId), sk: 'VAPID' });

/**
 * A secret stored the way webhook secrets are (`functions/shared/sealing.ts`): plaintext where no
 * key is set (customers' keys only), else sealed, with the id of the key (absent on older values).
 */
export const sealedSecret = z.union([
  z.object({ secret: z.string() }),
  z.object({ secretCiphertext: z.string(), secretIv: z.string(), secretKeyId: z.optional(z.string()) }),
]);

export const pushConfigItem = z.object({
  environment: z.string(),
  fcmServerKey: z.optional(sealedSecret),
  fcmProjectId: z.optional(z.string()),
  fcmServiceAccount: z.optional(sealedSecret),
  apnsBundleId: z.optional(z.string()),
  apnsUseSandbox: z.boolean(),
  apnsKeyId: z.optional(z.string()),
  apnsTeamId: z.optional(z.string()),
  apnsPrivateKey: z.optional(sealedSecret),
  webPushEnabled: z.boolean(),
  updatedAt: z.string(),
});
export type PushConfigItem = z.infer<typeof pushConfigItem>;

export const vapidItem = z.object({ publicKey: z.string(), privateKey: sealedSecret, createdAt: z.string() });
export type VapidItem = z.infer<typeof vapidItem>;

/**
 * One notification sent to one target, for the client's delivery acknowledgement. Kept a month
 * (TTL); pk alone addresses it, so an acknowledgement is one conditional write.
 */
export const pushRecordKey = (projectId: string, pushId: string) => ({ pk: `${projectPk(projectId)}#PUSHREC#${pushId}`, sk: 'PUSH' });
export const PUSH_RECORD_TTL_SECONDS = 30 * 86_400;
export const PUSH_ID_PATTERN = /^push_[A-Za-z0-9]{16,40}$/;
