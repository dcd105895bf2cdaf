import { openSecret, sealSecret } from '#domain/webhooks/secrets';
import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import * as bridges from '#shared/db/bridge';
import { type BridgeItem, type BridgePlatform, bridgeIndexKeys, bridgeKey, type StoredBridgeSecret } from '#shared/db/bridge';
import { BadRequestError, NotFoundError, RoomNotFoundError } from '#shared/errors';
import { newBridgeId, projectOfBridgeId } from '#shared/ids';
import { assertAllowedTargetUrl } from '#shared/outbound-guard';
import type { SealBinding } from '#shared/sealing';

export const MAX_BRIDGES_PER_PROJECT = 50;

/** The secrets a bridge may hold; they are sealed at rest and never answered. */
export const BRIDGE_SECRET_FIELDS = ['signingSecret', 'botToken', 'webhookToken', 'hsToken', 'asToken'] as const;
export type BridgeSecretField = (typeof BRIDGE_SECRET_FIELDS)[number];

/** Settings that may be shown, per platform, and the secrets each platform takes. */
const PLATFORM_FIELDS: Record<BridgePlatform, { settings: readonly string[]; secrets: readonly BridgeSecretField[] }> = {
  slack: { settings: ['channelId', 'teamId'], secrets: ['signingSecret', 'botToken'] },
  discord: { settings: ['publicKey', 'channelId', 'webhookId'], secrets: ['botToken', 'webhookToken'] },
  matrix: { settings: ['homeserverUrl', 'matrixRoomId'], secrets: ['hsToken', 'asToken'] },
};

/** What a client sends to create or change a bridge: the platform's settings and secrets by name. */
export interface BridgeFields {
  readonly channelId?: string;
  readonly teamId?: string;
  readonly signingSecret?: string;
  readonly botToken?: string;
  readonly publicKey?: string;
  readonly webhookUrl?: string;
  readonly hsToken?: string;
  readonly asToken?: string;
  readonly homeserverUrl?: string;
  readonly matrixRoomId?: string;
}

/** What a sealed bridge secret is bound to: this bridge and this field only. */
const secretBinding = (bridge: Pick<BridgeItem, 'projectId' | 'bridgeId'>, field: BridgeSecretField): SealBinding => ({
  purpose: 'bridge-secret',
  projectId: bridge.projectId,
  recordId: `${bridge.bridgeId}#${field}`,
});

/** The path the platform is pointed at (the service's base URL in front). */
export const inboundPathOf = (bridge: Pick<BridgeItem, 'platform' | 'bridgeId'>) =>
  bridge.platform === 'matrix' ? `/webhooks/matrix/${bridge.bridgeId}` : `/webhooks/bridge/${bridge.platform}/${bridge.bridgeId}`;

/** The public shape: settings, the names of the secrets it holds (never their values), where the platform calls. */
export function toBridge(item: BridgeItem) {
  return {
    id: item.bridgeId,
    platform: item.platform,
    roomId: item.roomId,
    settings: item.settings,
    secrets: Object.keys(item.secrets).sort(),
    inboundPath: inboundPathOf(item),
    createdAt: item.createdAt,
    createdBy: item.createdBy,
    updatedAt: item.updatedAt,
  };
}
export type Bridge = ReturnType<typeof toBridge>;

const invalid = (field: string, message: string) =>
  new BadRequestError(`Bridge settings: ${field} ${message}`, [{ field: `body.${field}`, message }], 'bridge_settings_invalid');

/**
 * A Discord webhook URL (`https://discord.com/api/webhooks/<id>/<token>`, or the discordapp.com,
 * ptb and canary hosts) split into its id and token. The relay calls `DISCORD_API_BASE_URL` with
 * them, never the URL as given, so a tenant cannot point the service at a host of their choosing.
 */
const DISCORD_WEBHOOK_URL =
  /^https:\/\/(?:(?:ptb|canary)\.)?discord(?:app)?\.com\/api(?:\/v\d+)?\/webhooks\/(\d{1,20})\/([A-Za-z0-9_-]{1,200})\/?$/;

/** The settings and secrets of `fields` for `platform`; refuses any field another platform takes. */
function platformValues(platform: BridgePlatform, fields: BridgeFields) {
  const allowed = new Set<string>([...PLATFORM_FIELDS[platform].settings, ...PLATFORM_FIELDS[platform].secrets]);
  if (platform === 'discord') allowed.add('webhookUrl');
  for (const [field, value] of Object.entries(fields)) {
    if (value !== undefined && !allowed.has(field)) throw invalid(field, `is not a setting of ${platform} bridges`);
  }
  const settings: Record<string, string> = {};
  const secrets: Partial<Record<BridgeSecretField, string>> = {};
  for (const field of PLATFORM_FIELDS[platform].settings) {
    const value = fields[field as keyof BridgeFields];
    if (value !== undefined) settings[field] = value;
  }
  for (const field of PLATFORM_FIELDS[platform].secrets) {
    const value = fields[field as keyof BridgeFields];
    if (value !== undefined) secrets[field] = value;
  }
  if (platform === 'discord' && fields.webhookUrl !== undefined) {
    const match = DISCORD_WEBHOOK_URL.exec(fields.webhookUrl);
    if (!match) throw invalid('webhookUrl', 'must be a Discord webhook URL (https://discord.com/api/webhooks/<id>/<token>)');
    settings.webhookId = match[1] as string;
    secrets.webhookToken = match[2] as string;
  }
  if (platform === 'matrix' && fields.homeserverUrl !== undefined) {
    // A tenant's URL: the webhook SSRF rules (https, no private hosts) apply, as they do when the relay calls it.
    settings.homeserverUrl = assertAllowedTargetUrl(fields.homeserverUrl, 'body.homeserverUrl').toString().replace(/\/$/, '');
  }
  return { settings, secrets };
}

/** Refuses a bridge that lacks what its platform needs to verify inbound events and to relay. */
function requireComplete(platform: BridgePlatform, settings: Record<string, string>, secretNames: ReadonlySet<string>) {
  const need = (field: string, present: boolean) => {
    if (!present) throw invalid(field, `is required for ${platform} bridges`);
  };
  if (platform === 'slack') {
    need('signingSecret', secretNames.has('signingSecret'));
    need('botToken', secretNames.has('botToken'));
    need('channelId', settings.channelId !== undefined);
  } else if (platform === 'discord') {
    need('publicKey', settings.publicKey !== undefined);
    const bot = secretNames.has('botToken') && settings.channelId !== undefined;
    const webhook = secretNames.has('webhookToken') && settings.webhookId !== undefined;
    if (!bot && !webhook) throw invalid('webhookUrl', 'or botToken with channelId is required for discord bridges');
  } else {
    need('hsToken', secretNames.has('hsToken'));
    need('asToken', secretNames.has('asToken'));
    need('homeserverUrl', settings.homeserverUrl !== undefined);
    need('matrixRoomId', settings.matrixRoomId !== undefined);
  }
}

async function sealAll(bridge: Pick<BridgeItem, 'projectId' | 'bridgeId'>, secrets: Partial<Record<BridgeSecretField, string>>) {
  const sealed: Record<string, StoredBridgeSecret> = {};
  for (const [field, value] of Object.entries(secrets)) {
    sealed[field] = await sealSecret(value, secretBinding(bridge, field as BridgeSecretField));
  }
  return sealed;
}

export async function createBridge(
  projectId: string,
  input: BridgeFields & { platform: BridgePlatform; roomId: string },
  createdBy: string,
): Promise<Bridge> {
  const { platform, roomId, ...fields } = input;
  const { settings, secrets } = platformValues(platform, fields);
  requireComplete(platform, settings, new Set(Object.keys(secrets)));
  if ((await bridges.listBridges(projectId)).length >= MAX_BRIDGES_PER_PROJECT) {
    throw new BadRequestError(`At most ${MAX_BRIDGES_PER_PROJECT} bridges per project`, undefined, 'too_many_bridges');
  }
  const bridgeId = newBridgeId(projectId);
  const now = new Date().toISOString();
  const item: BridgeItem = {
    ...bridgeKey(projectId, bridgeId),
    ...bridgeIndexKeys(projectId, roomId, bridgeId),
    projectId,
    bridgeId,
    platform,
    roomId,
    settings,
    secrets: await sealAll({ projectId, bridgeId }, secrets),
    createdAt: now,
    createdBy,
    updatedAt: now,
  };
  if (!(await bridges.createBridge(item))) throw new RoomNotFoundError();
  return toBridge(item);
}

export async function listBridges(projectId: string): Promise<Bridge[]> {
  return (await bridges.listBridges(projectId)).map(toBridge);
}

const bridgeNotFound = () => new NotFoundError('bridge_not_found', 'Bridge not found');

async function requireBridge(projectId: string, bridgeId: string): Promise<BridgeItem> {
  const item = await bridges.findBridge(projectId, bridgeId, { consistent: true });
  if (!item) throw bridgeNotFound();
  return item;
}

export async function getBridge(projectId: string, bridgeId: string): Promise<Bridge> {
  return toBridge(await requireBridge(projectId, bridgeId));
}

/** Changes settings and replaces the secrets given; the platform and the room stay. */
export async function updateBridge(projectId: string, bridgeId: string, changes: BridgeFields): Promise<Bridge> {
  const current = await requireBridge(projectId, bridgeId);
  const { settings, secrets } = platformValues(current.platform, changes);
  const merged = { ...current.settings, ...settings };
  const sealed = { ...current.secrets, ...(await sealAll(current, secrets)) };
  requireComplete(current.platform, merged, new Set(Object.keys(sealed)));
  const item: BridgeItem = { ...current, settings: merged, secrets: sealed, updatedAt: new Date().toISOString() };
  if (!(await bridges.replaceBridge(item))) throw bridgeNotFound();
  inboundCache.delete(bridgeId);
  return toBridge(item);
}

export async function deleteBridge(projectId: string, bridgeId: string): Promise<void> {
  const current = await requireBridge(projectId, bridgeId);
  if (!(await bridges.deleteBridge(projectId, bridgeId, current.roomId))) throw bridgeNotFound();
  inboundCache.delete(bridgeId);
}

/** Bridges found by the platform webhooks, for `CACHE_TTL_MS`: a busy channel reads its bridge once per instance and window. */
const inboundCache = new TtlCache<BridgeItem>(config.CACHE_TTL_MS);

/**
 * The bridge a platform webhook names, from its id alone (the id carries the project), when it is
 * a bridge of `platform`; else 404 `bridge_not_found`, the same for an id of no project, of no
 * bridge and of another platform's bridge.
 */
export async function bridgeForInbound(platform: BridgePlatform, bridgeId: string): Promise<BridgeItem> {
  let item = inboundCache.get(bridgeId);
  if (!item) {
    const projectId = projectOfBridgeId(bridgeId);
    item = projectId ? await bridges.findBridge(projectId, bridgeId) : undefined;
    if (item) inboundCache.set(bridgeId, item);
  }
  if (!item || item.platform !== platform) throw bridgeNotFound();
  return item;
}

/** One of the bridge's secrets in clear, `undefined` when it holds none under that name. */
export async function openBridgeSecret(bridge: BridgeItem, field: BridgeSecretField): Promise<string | undefined> {
  const stored = bridge.secrets[field];
  return stored ? openSecret(stored, secretBinding(bridge, field)) : undefined;
}

/** The bridges of a room (the relay's read). */
export const bridgesOfRoom = (projectId: string, roomId: string) => bridges.listRoomBridges(projectId, roomId);
