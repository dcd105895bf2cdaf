import { openSecret, resealed, sealSecret } from '#domain/webhooks/secrets';
import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import type { PushConfigItem } from '#shared/db/push-config';
import * as pushConfigs from '#shared/db/push-config';
import { createVapidKeys, findVapidKeys, resealVapidPrivateKey, type VapidItem } from '#shared/db/push-vapid';
import { BadRequestError } from '#shared/errors';
import { generatedKeyIsStale, openGeneratedKey, sealGeneratedKey } from '#shared/generated-keys';
import { logger } from '#shared/logger';
import { checkApnsKey } from '#shared/providers/apns';
import { type FcmServiceAccount, parseServiceAccount } from '#shared/providers/fcm';
import { generateVapidKeys } from '#shared/providers/web-push';
import type { SealBinding } from '#shared/sealing';

/**
 * Push configuration per environment (`PUT`/`GET /push/config`) and the project's VAPID key pair.
 * Provider keys are sealed like webhook secrets (under the `webhook-key` secret, each bound to its
 * project, environment and field); the VAPID private key, which the service generates, under the
 * `signing-key` secret. Neither leaves the service again: reading gives `hasFcm` and `hasApns` only.
 */

/** What `PUT /push/config` accepts: an omitted field keeps its stored value, `null` clears it. */
export interface PushConfigInput {
  readonly environment: string;
  readonly fcmServerKey?: string | null;
  readonly fcmProjectId?: string | null;
  readonly fcmServiceAccountJson?: string | null;
  readonly apnsBundleId?: string | null;
  readonly apnsUseSandbox?: boolean;
  readonly apnsKeyId?: string | null;
  readonly apnsTeamId?: string | null;
  readonly apnsPrivateKey?: string | null;
  readonly webPushEnabled?: boolean;
}

const hasFcm = (item: PushConfigItem) =>
  item.fcmServerKey !== undefined || (item.fcmProjectId !== undefined && item.fcmServiceAccount !== undefined);
const hasApns = (item: PushConfigItem) =>
  item.apnsBundleId !== undefined && item.apnsKeyId !== undefined && item.apnsTeamId !== undefined && item.apnsPrivateKey !== undefined;

export function toPushConfig(item: PushConfigItem) {
  return {
    environment: item.environment,
    fcmProjectId: item.fcmProjectId ?? null,
    apnsBundleId: item.apnsBundleId ?? null,
    apnsUseSandbox: item.apnsUseSandbox,
    webPushEnabled: item.webPushEnabled,
    hasFcm: hasFcm(item),
    hasApns: hasApns(item),
    updatedAt: item.updatedAt,
  };
}

const configCache = new TtlCache<PushConfigItem[]>(config.CACHE_TTL_MS);

type SealedField = 'fcmServerKey' | 'fcmServiceAccount' | 'apnsPrivateKey';
/** A provider key opens only as the field of the environment of the project it was put for. */
const pushKeyBinding = (projectId: string, environment: string, field: SealedField): SealBinding => ({
  purpose: 'push-key',
  projectId,
  recordId: `${environment}#${field}`,
});
const vapidBinding = (projectId: string): SealBinding => ({ purpose: 'vapid-private-key', projectId, recordId: 'VAPID' });

async function configItems(projectId: string): Promise<PushConfigItem[]> {
  const cached = configCache.get(projectId);
  if (cached) return cached;
  const items = await pushConfigs.listPushConfigItems(projectId);
  configCache.set(projectId, items);
  return items;
}

export async function listPushConfigs(projectId: string) {
  return (await configItems(projectId)).map(toPushConfig);
}

export async function putPushConfig(projectId: string, input: PushConfigInput) {
  const current = await pushConfigs.findPushConfig(projectId, input.environment);
  if (typeof input.fcmServiceAccountJson === 'string') {
    try {
      parseServiceAccount(input.fcmServiceAccountJson);
    } catch (error) {
      throw new BadRequestError('fcmServiceAccountJson is not a usable service account', [
        { field: 'body.fcmServiceAccountJson', message: (error as Error).message },
      ]);
    }
  }
  if (typeof input.apnsPrivateKey === 'string') {
    try {
      checkApnsKey(input.apnsPrivateKey);
    } catch (error) {
      throw new BadRequestError('apnsPrivateKey is not a usable APNs key', [
        { field: 'body.apnsPrivateKey', message: (error as Error).message },
      ]);
    }
  }
  const plain = async (given: string | null | undefined, stored: string | undefined) =>
    given === undefined ? stored : (given ?? undefined);
  // A kept key is sealed again when it is in an older format or under a key no longer current.
  const sealed = async (field: SealedField, given: string | null | undefined, stored: PushConfigItem['fcmServerKey']) => {
    const binding = pushKeyBinding(projectId, input.environment, field);
    if (given === undefined) return stored && (await resealed(stored, binding));
    return given === null ? undefined : await sealSecret(given, binding);
  };
  const item: PushConfigItem = {
    environment: input.environment,
    fcmServerKey: await sealed('fcmServerKey', input.fcmServerKey, current?.fcmServerKey),
    fcmProjectId: await plain(input.fcmProjectId, current?.fcmProjectId),
    fcmServiceAccount: await sealed('fcmServiceAccount', input.fcmServiceAccountJson, current?.fcmServiceAccount),
    apnsBundleId: await plain(input.apnsBundleId, current?.apnsBundleId),
    apnsUseSandbox: input.apnsUseSandbox ?? current?.apnsUseSandbox ?? false,
    apnsKeyId: await plain(input.apnsKeyId, current?.apnsKeyId),
    apnsTeamId: await plain(input.apnsTeamId, current?.apnsTeamId),
    apnsPrivateKey: await sealed('apnsPrivateKey', input.apnsPrivateKey, current?.apnsPrivateKey),
    webPushEnabled: input.webPushEnabled ?? current?.webPushEnabled ?? true,
    updatedAt: new Date().toISOString(),
  };
  await pushConfigs.putPushConfig(projectId, item);
  configCache.delete(projectId);
  return { config: toPushConfig(item), created: current === undefined };
}

/** What a sender may use, opened: only the providers whose configuration is complete. */
export interface SendingConfig {
  readonly webPushEnabled: boolean;
  readonly fcm?: { readonly serverKey?: string; readonly projectId?: string; readonly serviceAccount?: FcmServiceAccount };
  readonly apns?: {
    readonly bundleId: string;
    readonly sandbox: boolean;
    readonly keyId: string;
    readonly teamId: string;
    readonly privateKey: string;
  };
}

/**
 * The configuration of the environment this deployment sends for (`PUSH_ENVIRONMENT`). With no
 * row for it, web push is on (the spec's default behaviour) and mobile providers are off unless
 * the operator's global FCM legacy key is set (the caller adds it). A row whose keys cannot be
 * opened (a sealed key that does not decrypt, a malformed service account) stops mobile pushes
 * only: web push needs none of it, so it keeps the row's own switch. Failing to read the row is
 * thrown, so the dispatcher's event or the sender's batch is tried again.
 */
export async function sendingConfig(projectId: string): Promise<SendingConfig> {
  const item = (await configItems(projectId)).find((candidate) => candidate.environment === config.PUSH_ENVIRONMENT);
  if (!item) return { webPushEnabled: true };
  try {
    return await openedProviders(projectId, item);
  } catch (error) {
    logger.error('push.config_error', { projectId, reason: 'the push configuration could not be opened', error: error as Error });
    return { webPushEnabled: item.webPushEnabled };
  }
}

async function openedProviders(projectId: string, item: PushConfigItem): Promise<SendingConfig> {
  const open = async (field: SealedField) => {
    const stored = item[field];
    return stored ? await openSecret(stored, pushKeyBinding(projectId, item.environment, field)) : undefined;
  };
  const serviceAccountJson = await open('fcmServiceAccount');
  const apnsKey = await open('apnsPrivateKey');
  return {
    webPushEnabled: item.webPushEnabled,
    fcm: {
      serverKey: await open('fcmServerKey'),
      projectId: item.fcmProjectId,
      serviceAccount: serviceAccountJson ? parseServiceAccount(serviceAccountJson) : undefined,
    },
    ...(item.apnsBundleId && item.apnsKeyId && item.apnsTeamId && apnsKey
      ? {
          apns: {
            bundleId: item.apnsBundleId,
            sandbox: item.apnsUseSandbox,
            keyId: item.apnsKeyId,
            teamId: item.apnsTeamId,
            privateKey: apnsKey,
          },
        }
      : {}),
  };
}

export interface ProjectVapidKeys {
  readonly publicKey: string;
  readonly privateKey: string;
}
const vapidCache = new TtlCache<ProjectVapidKeys>(60 * 60 * 1000);

/**
 * The project's VAPID key pair, generated on first use. Concurrent first uses race on a
 * conditional put; the loser reads the winner's pair, so every subscriber sees one public key.
 */
export async function projectVapidKeys(projectId: string): Promise<ProjectVapidKeys> {
  const cached = vapidCache.get(projectId);
  if (cached) return cached;
  let stored = await findVapidKeys(projectId);
  if (!stored) {
    const generated = generateVapidKeys();
    const item = {
      publicKey: generated.publicKey,
      privateKey: await sealGeneratedKey(generated.privateKey, vapidBinding(projectId)),
      createdAt: new Date().toISOString(),
    };
    if (await createVapidKeys(projectId, item)) stored = item;
    else {
      stored = await findVapidKeys(projectId);
      if (!stored) throw new Error(`the VAPID key pair of ${projectId} was created concurrently and then could not be read`);
    }
  }
  const keys = { publicKey: stored.publicKey, privateKey: await openVapidPrivateKey(projectId, stored.privateKey) };
  vapidCache.set(projectId, keys);
  return keys;
}

/**
 * Opens a stored VAPID private key. Pairs made before the `signing-key` secret existed hold it in
 * plain or sealed under `webhook-key` without a key id: they still open, and are sealed again
 * under `signing-key` (as is a key under a `signing-key` key that is no longer current).
 */
async function openVapidPrivateKey(projectId: string, stored: VapidItem['privateKey']): Promise<string> {
  const binding = vapidBinding(projectId);
  const current = 'secretKeyId' in stored && stored.secretKeyId !== undefined ? stored : undefined;
  const privateKey = current ? await openGeneratedKey(current, binding) : await openSecret(stored, binding);
  if (!current || (await generatedKeyIsStale(current))) {
    await resealVapidPrivateKey(projectId, await sealGeneratedKey(privateKey, binding));
  }
  return privateKey;
}
