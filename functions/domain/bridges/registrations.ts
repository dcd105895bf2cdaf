import * as bridges from '#shared/db/bridge';
import { type BridgeItem, type BridgePlatform, bridgeIndexKeys, bridgeKey } from '#shared/db/bridge';
import { BadRequestError, RoomNotFoundError } from '#shared/errors';
import { newBridgeId } from '#shared/ids';
import { assertAllowedTargetUrl } from '#shared/outbound-guard';
import { type BridgeSecretField, sealBridgeSecrets } from './bridge-secrets';
import { type Bridge, bridgeNotFound, forgetInboundBridge, requireBridge, toBridge } from './bridges';

/** Making and changing bridges: each platform's settings checked, its secrets sealed (`./bridge-secrets`). */

export const MAX_BRIDGES_PER_PROJECT = 50;

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
    secrets: await sealBridgeSecrets({ projectId, bridgeId }, secrets),
    createdAt: now,
    createdBy,
    updatedAt: now,
  };
  if (!(await bridges.createBridge(item))) throw new RoomNotFoundError();
  return toBridge(item);
}

/** Changes settings and replaces the secrets given; the platform and the room stay. */
export async function updateBridge(projectId: string, bridgeId: string, changes: BridgeFields): Promise<Bridge> {
  const current = await requireBridge(projectId, bridgeId);
  const { settings, secrets } = platformValues(current.platform, changes);
  const merged = { ...current.settings, ...settings };
  const sealed = { ...current.secrets, ...(await sealBridgeSecrets(current, secrets)) };
  requireComplete(current.platform, merged, new Set(Object.keys(sealed)));
  const item: BridgeItem = { ...current, settings: merged, secrets: sealed, updatedAt: new Date().toISOString() };
  if (!(await bridges.replaceBridge(item))) throw bridgeNotFound();
  forgetInboundBridge(bridgeId);
  return toBridge(item);
}
