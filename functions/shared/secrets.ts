import { GetSecretValueCommand, ResourceNotFoundException, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { sdkClientDefaults } from '#shared/aws-clients';
import { boundIfSet } from '#shared/bindings';
import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import { type KeyRing, parseKeyRing } from '#shared/sealing';
import { checkSecretFormat } from '#shared/secret-formats';
import { type SecretId, UNSET_SECRET_PLACEHOLDER } from '#wiring/bindings';

let client: SecretsManagerClient | undefined;
/** `null` caches "not set", so an unconfigured secret costs one request per cache period, not one per call. */
const cache = new TtlCache<string | null>(config.SECRETS_CACHE_TTL_MS);

/**
 * The value of a secret this function is bound to (`secret:<id>` in its wiring-table entry), read
 * from Secrets Manager (the local stand-in on one machine) and kept for `SECRETS_CACHE_TTL_MS`, so
 * a replaced value reaches every instance within that time. `undefined` when the secret does not
 * exist (locally: its setting is unset).
 */
export async function secretValue(secretId: SecretId): Promise<string | undefined> {
  const cached = cache.get(secretId);
  if (cached !== undefined) return cached ?? undefined;
  const arn = boundIfSet(`secret:${secretId}`);
  let value: string | undefined;
  if (arn) {
    client ??= new SecretsManagerClient({ maxAttempts: 3, ...sdkClientDefaults });
    try {
      const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: arn }));
      value =
        SecretString === undefined || SecretString === UNSET_SECRET_PLACEHOLDER ? undefined : checkSecretFormat(secretId, SecretString);
    } catch (error) {
      if (!(error instanceof ResourceNotFoundException)) throw error;
    }
  }
  cache.set(secretId, value ?? null);
  return value;
}

/** A key secret (`signing-key`, `webhook-key`) as its ring of keys, `undefined` where it is not set. */
export async function secretKeyRing(secretId: SecretId): Promise<KeyRing | undefined> {
  const raw = await secretValue(secretId);
  return raw ? parseKeyRing(raw) : undefined;
}
