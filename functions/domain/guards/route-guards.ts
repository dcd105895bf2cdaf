import { createHash } from 'node:crypto';
import { flagEnabled } from '#domain/flags/feature-flags';
import { consumeRateLimit } from '#domain/rate-limit/rate-limit';
import { config } from '#shared/config';
import { ForbiddenError, RateLimitedError } from '#shared/errors';
import type { FeatureFlag, RateLimit } from '#wiring';

/** Who is asking, as far as a route's flag and rate limit care. */
export interface GuardSubject {
  /** `undefined` on public routes: the defaults of the flags apply, limits count in a shared space. */
  readonly projectId?: string;
  /** The calling user; a service principal (API key) has none and is not user-limited. */
  readonly userId?: string;
  readonly sourceIp?: string;
  readonly connectionId?: string;
  /** The request's path: limits that count refusals count a 401 per address and path. */
  readonly path?: string;
}

/** Rate limits of public routes count here: there is no project to count them in. */
const PUBLIC_SPACE = '_public';

/**
 * The one place a wiring-table entry's feature flag and rate limit are enforced, for HTTP routes
 * (`functions/edge/http.ts`) and WebSocket frames (`functions/edge/frames.ts`) alike: a flag
 * that is off answers 403 `feature_disabled`; over the limit, `RateLimitedError` (429 with
 * `Retry-After`, or an `error` frame with `retryAfter`).
 */
export async function enforceRouteGuards(entry: { readonly flag?: FeatureFlag; readonly rateLimit?: RateLimit }, subject: GuardSubject) {
  const { flag, rateLimit } = entry;
  if (flag && !(await flagEnabled(subject.projectId, flag))) {
    throw new ForbiddenError(`The ${flag} feature is turned off for this project`, 'feature_disabled');
  }
  if (!rateLimit) return;
  if (rateLimit.counts === 'refusals') {
    refuseBlocked(rateLimit, subject);
    return;
  }
  const key = rateLimitKey(rateLimit, subject);
  if (key === undefined) return;
  await consumeRateLimit(
    subject.projectId ?? PUBLIC_SPACE,
    rateLimit.bucket,
    [key],
    config[rateLimit.setting],
    (rateLimit.windowSeconds ?? 60) * 1000,
  );
}

function rateLimitKey(rateLimit: RateLimit, subject: GuardSubject): string | undefined {
  switch (rateLimit.per) {
    case 'ip':
      return `ip:${subject.sourceIp ?? 'unknown'}`;
    case 'user':
      return subject.userId === undefined ? undefined : `user:${subject.userId}`;
    case 'connection':
      if (!subject.connectionId) throw new Error(`The ${rateLimit.bucket} limit counts per connection, which only frames have`);
      return subject.connectionId;
  }
}

/**
 * Counters of limits that count refusals (`counts: 'refusals'`) whose budget this function instance
 * saw spent (by `<bucket>|<counter key>`), with the end of that window (epoch ms). In memory: a
 * genuine request costs no read, and an address over the limit costs nothing more once an instance
 * knows it.
 */
const spentRefusalCounters = new Map<string, number>();

/**
 * The counters a refusal may spend: a 404 the limit's own key (per address: an address trying ids),
 * any other refusal (a bad signature's 401, a malformed request's 400 or 413) that key and the path,
 * so one tenant's misconfigured bridge blocks no other's.
 */
function refusalCounters(rateLimit: RateLimit, subject: GuardSubject) {
  const key = rateLimitKey(rateLimit, subject);
  return key === undefined ? undefined : { notFound: key, other: `${key}|${pathPart(subject.path ?? '')}` };
}

/** Paths longer than this are counted by their digest: a counter's key is part of its item's partition key, which DynamoDB caps at 2,048 bytes. */
const PATH_PART_MAX_LENGTH = 256;

/** A path as a counter names it: itself, or, past `PATH_PART_MAX_LENGTH` (a client's choice), its SHA-256. */
const pathPart = (path: string) =>
  path.length <= PATH_PART_MAX_LENGTH ? path : `sha256:${createHash('sha256').update(path).digest('hex')}`;

/** What a limit counting refusals counts: every 4xx but its own 429. */
const isRefusal = (status: number) => status >= 400 && status < 500 && status !== 429;

function refuseBlocked(rateLimit: RateLimit, subject: GuardSubject): void {
  const counters = refusalCounters(rateLimit, subject);
  if (!counters) return;
  const now = Date.now();
  for (const counter of [counters.notFound, counters.other]) {
    const spent = `${rateLimit.bucket}|${counter}`;
    const until = spentRefusalCounters.get(spent);
    if (until === undefined) continue;
    if (until <= now) spentRefusalCounters.delete(spent);
    else throw new RateLimitedError(Math.max(1, Math.ceil((until - now) / 1000)));
  }
}

/**
 * Counts a refusal (a 4xx other than 429) of a route whose limit counts refusals; past the limit,
 * this instance refuses the address (on that path, but for 404s) until the window ends. Other
 * statuses and other limits count nothing here.
 */
export async function countRefusal(entry: { readonly rateLimit?: RateLimit }, subject: GuardSubject, status: number): Promise<void> {
  const { rateLimit } = entry;
  if (rateLimit?.counts !== 'refusals' || !isRefusal(status)) return;
  const counters = refusalCounters(rateLimit, subject);
  if (!counters) return;
  const counter = status === 404 ? counters.notFound : counters.other;
  try {
    await consumeRateLimit(
      subject.projectId ?? PUBLIC_SPACE,
      rateLimit.bucket,
      [counter],
      config[rateLimit.setting],
      (rateLimit.windowSeconds ?? 60) * 1000,
    );
  } catch (error) {
    if (!(error instanceof RateLimitedError)) throw error;
    if (spentRefusalCounters.size > 10_000) spentRefusalCounters.clear();
    spentRefusalCounters.set(`${rateLimit.bucket}|${counter}`, Date.now() + error.retryAfterSeconds * 1000);
  }
}
