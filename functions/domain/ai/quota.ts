import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import { findProjectAiQuota, putProjectAiQuota, removeProjectAiQuota } from '#shared/db/ai-quota';
import { addInvocation, invocationsInMonth, monthOf } from '#shared/db/ai-usage';
import { HttpError } from '#shared/errors';
import { countMetric } from '#shared/metrics';

/**
 * The monthly AI quota of a project: every AI call (thread and room summaries, suggestions, agents,
 * handoff summaries) counts one `agent_invocations`. The count is sharded (`#shared/db/ai-usage`)
 * so a busy project spreads its writes; reading the total is one Query. An instance trusts the
 * total it read for `CACHE_TTL_MS` plus what it added itself, so a project can overshoot its quota
 * by the calls other instances make within that time: a few calls, not a bill.
 */

export class QuotaExceededError extends HttpError<402> {
  constructor(quota: number) {
    super(402, 'quota_exceeded', `The project's monthly AI quota of ${quota} calls is used up; it renews on the first of the month (UTC)`);
  }
}

const usedCache = new TtlCache<{ used: number }>(config.CACHE_TTL_MS);
const quotaCache = new TtlCache<number>(config.CACHE_TTL_MS * 12);

export async function monthlyQuota(projectId: string): Promise<number> {
  const cached = quotaCache.get(projectId);
  if (cached !== undefined) return cached;
  const quota = (await findProjectAiQuota(projectId)) ?? config.AI_MONTHLY_QUOTA;
  quotaCache.set(projectId, quota);
  return quota;
}

/** The project's own quota; `null` returns it to `AI_MONTHLY_QUOTA`. */
export async function setMonthlyQuota(projectId: string, monthlyInvocations: number | null): Promise<void> {
  if (monthlyInvocations === null) await removeProjectAiQuota(projectId);
  else await putProjectAiQuota(projectId, monthlyInvocations);
  quotaCache.delete(projectId);
}

async function usedThisMonth(projectId: string, month: string, options: { fresh?: boolean } = {}): Promise<number> {
  const cacheKey = `${projectId}\u0000${month}`;
  const cached = options.fresh ? undefined : usedCache.get(cacheKey);
  if (cached) return cached.used;
  const used = await invocationsInMonth(projectId, month);
  usedCache.set(cacheKey, { used });
  return used;
}

export async function usage(projectId: string) {
  const month = monthOf(new Date());
  const [used, quota] = await Promise.all([usedThisMonth(projectId, month, { fresh: true }), monthlyQuota(projectId)]);
  return { month, used, quota, remaining: Math.max(quota - used, 0) };
}

/** Throws `402 quota_exceeded` when the month's calls reached the quota. */
export async function requireQuota(projectId: string): Promise<void> {
  const month = monthOf(new Date());
  const [used, quota] = await Promise.all([usedThisMonth(projectId, month), monthlyQuota(projectId)]);
  if (used >= quota) throw new QuotaExceededError(quota);
}

/** Counts one AI call: a random shard, and the `agent_invocations` metric. */
export async function countInvocation(projectId: string): Promise<void> {
  const month = monthOf(new Date());
  await addInvocation(projectId, month);
  const cached = usedCache.get(`${projectId}\u0000${month}`);
  if (cached) cached.used++;
  countMetric('agent_invocations', 1, { projectId });
}
