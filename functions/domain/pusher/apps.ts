import { randomBytes, randomInt } from 'node:crypto';
import { openSecret, sealSecret } from '#domain/webhooks/secrets';
import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import {
  findProjectPusherAppItem,
  findPusherAppItemById,
  findPusherAppItemByKey,
  type PusherAppRecord,
  putPusherApp,
} from '#shared/db/pusher-app';
import { ConflictError, NotFoundError } from '#shared/errors';
import type { SealBinding } from '#shared/sealing';

/**
 * A project's Pusher app (one per project): what pusher-js, Laravel Echo and the Pusher server
 * libraries are configured with. The key names the app on the socket (`/app/<key>`) and in the
 * trigger API's `auth_key`; the secret signs channel auths and trigger requests, and is sealed at
 * rest under `webhook-key` as bridge secrets are. Only the functions bound to `secret:webhook-key`
 * may call the readers here, which open the secret.
 */
export interface PusherApp {
  readonly projectId: string;
  readonly appId: string;
  readonly key: string;
  /** Opened. */
  readonly secret: string;
}

/** What a sealed secret is bound to: this project's app of this id, so a value copied to another app does not open. */
const secretBinding = (projectId: string, appId: string): SealBinding => ({ purpose: 'pusher-secret', projectId, recordId: appId });

async function opened(record: PusherAppRecord | undefined): Promise<PusherApp | undefined> {
  if (!record) return undefined;
  const secret = await openSecret(record.sealedSecret, secretBinding(record.projectId, record.appId));
  return { projectId: record.projectId, appId: record.appId, key: record.key, secret };
}

/** Sockets resolve their key on every connect: a few seconds of trust spare the table a read per socket. */
const byKey = new TtlCache<PusherApp>(config.CACHE_TTL_MS);

/** The app whose key this is (cached `CACHE_TTL_MS`); `undefined` for a key no app holds. */
export async function findPusherAppByKey(key: string): Promise<PusherApp | undefined> {
  const cached = byKey.get(key);
  if (cached) return cached;
  const app = await opened(await findPusherAppItemByKey(key));
  if (app) byKey.set(key, app);
  return app;
}

/**
 * The app of this id, read afresh: the trigger API checks the caller's `auth_key` against it, so a
 * rotated key is refused from the rotation on.
 */
export const findPusherAppById = async (appId: string): Promise<PusherApp | undefined> => opened(await findPusherAppItemById(appId));

export const findProjectPusherApp = async (projectId: string): Promise<PusherApp | undefined> =>
  opened(await findProjectPusherAppItem(projectId));

/** The project's app, or 409 `pusher_app_not_configured` until an admin creates one. */
export async function requireProjectPusherApp(projectId: string): Promise<PusherApp> {
  const app = await findProjectPusherApp(projectId);
  if (!app) {
    throw new ConflictError(
      'pusher_app_not_configured',
      'This project has no Pusher app yet: an admin creates one with POST /admin/pusher-app',
    );
  }
  return app;
}

/** `GET /admin/pusher-app`: the app id and key, never the secret. */
export async function describePusherApp(projectId: string): Promise<{ appId: string; key: string }> {
  const item = await findProjectPusherAppItem(projectId, { consistent: true });
  if (!item) throw new NotFoundError('pusher_app_not_found', 'This project has no Pusher app');
  return { appId: item.appId, key: item.key };
}

/** Pusher's app ids are numbers; 12 digits keep collisions between projects unlikely, and the write refuses one anyway. */
const newAppId = () => String(randomInt(100_000, 1_000_000)) + String(randomInt(0, 1_000_000)).padStart(6, '0');
/** Pusher's keys and secrets are 20 hex characters; a secret of 32 bytes is stronger and any Pusher library takes it. */
const newKey = () => randomBytes(10).toString('hex');
const newSecret = () => randomBytes(32).toString('hex');

/** How often a create meets a key or app id taken meanwhile (or a concurrent rotation) before it gives up. */
const WRITE_ATTEMPTS = 3;

/**
 * `POST /admin/pusher-app`: a first app, or new key and secret for the project's app (its app id
 * stays, so server configuration keeps its `appId`). The old key stops resolving when the write
 * commits. Answers the secret, which is shown only here.
 */
export async function createOrRotatePusherApp(
  projectId: string,
): Promise<{ appId: string; key: string; secret: string; rotated: boolean }> {
  for (let attempt = 1; ; attempt++) {
    const was = await findProjectPusherAppItem(projectId, { consistent: true });
    const appId = was?.appId ?? newAppId();
    const key = newKey();
    const secret = newSecret();
    const now = new Date().toISOString();
    const record: PusherAppRecord = {
      projectId,
      appId,
      key,
      sealedSecret: await sealSecret(secret, secretBinding(projectId, appId)),
      createdAt: was?.createdAt ?? now,
      updatedAt: now,
    };
    if (await putPusherApp(record, was)) {
      if (was) byKey.delete(was.key);
      return { appId, key, secret, rotated: was !== undefined };
    }
    if (attempt >= WRITE_ATTEMPTS) throw new ConflictError('pusher_app_changed', 'The Pusher app changed meanwhile; try again');
  }
}
