import {
  DIGEST_PREFERENCE_DEFAULTS,
  type DigestPreferenceItem,
  type DigestPreferencePatch,
  findDigestPreference,
  updateDigestPreference,
} from '#shared/db/digest-preference';
import { addDigestProject } from '#shared/db/digest-project';

export type DigestPreferences = {
  readonly enabled: boolean;
  readonly email: string | null;
  readonly inAppEnabled: boolean;
  readonly webPushEnabled: boolean;
  readonly emailEnabled: boolean;
};

export function toDigestPreferences(item: DigestPreferenceItem | undefined): DigestPreferences {
  if (!item) return { ...DIGEST_PREFERENCE_DEFAULTS };
  return {
    enabled: item.enabled,
    email: item.email ?? null,
    inAppEnabled: item.inAppEnabled,
    webPushEnabled: item.webPushEnabled,
    emailEnabled: item.emailEnabled,
  };
}

export async function getDigestPreferences(projectId: string, userId: string): Promise<DigestPreferences> {
  return toDigestPreferences(await findDigestPreference(projectId, userId));
}

/**
 * Changes the fields given. Turning the digest on first enters the project in the directory the
 * scheduled run pages through, so a subscriber is never in an index the run cannot reach.
 */
export async function updateDigestPreferences(projectId: string, userId: string, patch: DigestPreferencePatch): Promise<DigestPreferences> {
  const now = new Date().toISOString();
  if (patch.enabled === true) await addDigestProject(projectId, now);
  return toDigestPreferences(await updateDigestPreference(projectId, userId, patch, now));
}
