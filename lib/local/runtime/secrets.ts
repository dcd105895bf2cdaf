import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type SecretId, secretDefinitions } from '#wiring/bindings';

/** The setting each secret's local value comes from (`CHAT_OPERATOR_KEY` for `operator-key`). */
const secretSettings = new Map(
  Object.entries(secretDefinitions).map(([secretId, definition]) => [definition.setting, secretId as SecretId]),
);

/**
 * Splits the given settings: secret values go to the secrets stand-in (from the settings, else from
 * `process.env`) and never reach the handlers as settings; the rest are the handlers' settings.
 * @throws naming the setting, when a secret's value has the wrong format.
 */
export async function separateSecrets(
  env: Readonly<Record<string, string>> | undefined,
  dataDir: string | undefined,
): Promise<{ settings: Record<string, string>; secretValues: Partial<Record<SecretId, string>> }> {
  const settings = { ...env };
  const secretValues: Partial<Record<SecretId, string>> = {};
  for (const [setting, secretId] of secretSettings) {
    const value = settings[setting] ?? process.env[setting];
    if (value) secretValues[secretId] = value;
    delete settings[setting];
  }
  // The keys the service generates are never stored in plain, so this secret always exists: made
  // here when not given, as Secrets Manager makes it on AWS, and kept beside the data it opens.
  secretValues['signing-key'] ??= localSigningKey(dataDir);
  await checkFormats(secretValues);
  return { settings, secretValues };
}

/** Refused now, naming the setting, rather than at the first request that reads the secret. */
async function checkFormats(secretValues: Partial<Record<SecretId, string>>): Promise<void> {
  const { checkSecretFormat } = await import('../../../functions/shared/secret-formats');
  for (const [secretId, value] of Object.entries(secretValues) as [SecretId, string][]) {
    try {
      checkSecretFormat(secretId, value);
    } catch (error) {
      throw new Error(`${secretDefinitions[secretId].setting}: ${(error as Error).message}`);
    }
  }
}

/** A data folder's own signing key (created on its first run), or a throwaway one for a run in memory. */
function localSigningKey(dataDir: string | undefined): string {
  if (!dataDir) return randomBytes(32).toString('hex');
  const file = join(dataDir, 'signing-key');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(32).toString('hex');
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}
