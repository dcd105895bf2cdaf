import { openSecret, sealSecret } from '#domain/webhooks/secrets';
import type { BridgeItem, StoredBridgeSecret } from '#shared/db/bridge';
import type { SealBinding } from '#shared/sealing';

/**
 * A bridge's secrets (signing secrets, tokens): sealed under `webhook-key` as webhook secrets are,
 * each bound to its bridge and field, so a value copied to another bridge or field does not open.
 * Only the functions that seal or open them import this module (and are bound to the key).
 */

/** The secrets a bridge may hold; they are sealed at rest and never answered. */
export const BRIDGE_SECRET_FIELDS = ['signingSecret', 'botToken', 'webhookToken', 'hsToken', 'asToken'] as const;
export type BridgeSecretField = (typeof BRIDGE_SECRET_FIELDS)[number];

/** What a sealed bridge secret is bound to: this bridge and this field only. */
const secretBinding = (bridge: Pick<BridgeItem, 'projectId' | 'bridgeId'>, field: BridgeSecretField): SealBinding => ({
  purpose: 'bridge-secret',
  projectId: bridge.projectId,
  recordId: `${bridge.bridgeId}#${field}`,
});

/** The secrets as they are stored, each sealed for `bridge` and its field. */
export async function sealBridgeSecrets(
  bridge: Pick<BridgeItem, 'projectId' | 'bridgeId'>,
  secrets: Partial<Record<BridgeSecretField, string>>,
): Promise<Record<string, StoredBridgeSecret>> {
  const sealed: Record<string, StoredBridgeSecret> = {};
  for (const [field, value] of Object.entries(secrets)) {
    sealed[field] = await sealSecret(value, secretBinding(bridge, field as BridgeSecretField));
  }
  return sealed;
}

/** One of the bridge's secrets in clear, `undefined` when it holds none under that name. */
export async function openBridgeSecret(bridge: BridgeItem, field: BridgeSecretField): Promise<string | undefined> {
  const stored = bridge.secrets[field];
  return stored ? openSecret(stored, secretBinding(bridge, field)) : undefined;
}
