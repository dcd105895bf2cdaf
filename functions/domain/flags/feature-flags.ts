import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import { type FlagOverrides, findFlagOverrides, putFlagOverrides } from '#shared/db/feature-flags';
import type { FeatureFlag } from '#wiring';

/** The spec's defaults; a project admin may override each one for the project. */
export const FEATURE_FLAG_DEFAULTS = {
  voice_messages: true,
  reply_suggestions: true,
  embed_widget: true,
  reconnect_backoff_fluxy: false,
} as const satisfies Record<FeatureFlag, boolean>;

/** `reconnect_backoff_fluxy` on: the spec's 500 ms / 20 s curve; off: the 1 s / 8 s one. */
const FLUXY_BACKOFF = { baseBackoffMs: 500, maxBackoffMs: 20_000 };
const CLASSIC_BACKOFF = { baseBackoffMs: 1000, maxBackoffMs: 8000 };

const overridesCache = new TtlCache<FlagOverrides>(config.CACHE_TTL_MS);

export async function projectOverrides(projectId: string): Promise<FlagOverrides> {
  const cached = overridesCache.get(projectId);
  if (cached) return cached;
  const overrides = await findFlagOverrides(projectId);
  overridesCache.set(projectId, overrides);
  return overrides;
}

export async function replaceOverrides(projectId: string, overrides: FlagOverrides, updatedBy: string): Promise<FlagOverrides> {
  await putFlagOverrides(projectId, overrides, updatedBy, new Date().toISOString());
  overridesCache.set(projectId, overrides);
  return overrides;
}

/** The feature flags result: defaults, then the project's overrides when the caller named a project. */
export async function resolveFlags(projectId?: string) {
  const overrides = projectId ? await projectOverrides(projectId) : {};
  const flags: Record<FeatureFlag, boolean> = { ...FEATURE_FLAG_DEFAULTS, ...overrides };
  return {
    flags,
    flagship: projectId !== undefined,
    reconnectBackoff: flags.reconnect_backoff_fluxy ? FLUXY_BACKOFF : CLASSIC_BACKOFF,
  };
}

/** Whether a flag is on for the project (its override, else the default); without a project, the default. */
export async function flagEnabled(projectId: string | undefined, flag: FeatureFlag): Promise<boolean> {
  const overrides = projectId ? await projectOverrides(projectId) : {};
  return overrides[flag] ?? FEATURE_FLAG_DEFAULTS[flag];
}
