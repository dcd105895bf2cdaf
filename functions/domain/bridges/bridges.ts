import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import type { BridgeItem, BridgePlatform } from '#shared/db/bridge';
import * as bridges from '#shared/db/bridge';
import { NotFoundError } from '#shared/errors';
import { projectOfBridgeId } from '#shared/ids';

/**
 * Reading and removing bridges, and finding the one a platform webhook names. Nothing here opens a
 * secret (`./bridge-secrets` does), so the routes that only read or delete need no key.
 */

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

export const bridgeNotFound = () => new NotFoundError('bridge_not_found', 'Bridge not found');

export async function listBridges(projectId: string): Promise<Bridge[]> {
  return (await bridges.listBridges(projectId)).map(toBridge);
}

/** The bridge as stored (a consistent read), or 404 `bridge_not_found`. */
export async function requireBridge(projectId: string, bridgeId: string): Promise<BridgeItem> {
  const item = await bridges.findBridge(projectId, bridgeId, { consistent: true });
  if (!item) throw bridgeNotFound();
  return item;
}

export async function getBridge(projectId: string, bridgeId: string): Promise<Bridge> {
  return toBridge(await requireBridge(projectId, bridgeId));
}

export async function deleteBridge(projectId: string, bridgeId: string): Promise<void> {
  const current = await requireBridge(projectId, bridgeId);
  if (!(await bridges.deleteBridge(projectId, bridgeId, current.roomId))) throw bridgeNotFound();
  forgetInboundBridge(bridgeId);
}

/** Bridges found by the platform webhooks, for `CACHE_TTL_MS`: a busy channel reads its bridge once per instance and window. */
const inboundCache = new TtlCache<BridgeItem>(config.CACHE_TTL_MS);

/** This instance reads the bridge afresh on the next webhook (it changed or is gone). */
export const forgetInboundBridge = (bridgeId: string) => inboundCache.delete(bridgeId);

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

/** The bridges of a room (the relay's read). */
export const bridgesOfRoom = (projectId: string, roomId: string) => bridges.listRoomBridges(projectId, roomId);
