/** The reconnect curve, as `GET /client/feature-flags` answers it in `reconnectBackoff`. */
export interface BackoffSettings {
  readonly baseBackoffMs: number;
  readonly maxBackoffMs: number;
}

/** The service's default curve ("1 s / 8 s"), used until (or when) the feature flags cannot be read. */
export const DEFAULT_BACKOFF: BackoffSettings = { baseBackoffMs: 1000, maxBackoffMs: 8000 };

/**
 * Exponential backoff with full jitter: a uniform delay in `[0, min(maxBackoffMs, baseBackoffMs · 2^attempt))`.
 * Jitter over the whole window spreads a crowd of clients that lost the same server, so they do not
 * come back in lock-step. `attempt` counts from 0 (the first retry).
 *
 * @param random a uniform source in `[0, 1)` @default Math.random
 */
export function backoffDelay(attempt: number, settings: BackoffSettings = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const base = Math.max(0, settings.baseBackoffMs);
  const max = Math.max(base, settings.maxBackoffMs);
  // 2^31 already exceeds any sane cap; bounding the exponent keeps the product finite.
  const ceiling = Math.min(max, base * 2 ** Math.min(Math.max(0, Math.floor(attempt)), 31));
  return Math.floor(random() * ceiling);
}

/** Reads `reconnectBackoff` from a feature-flags answer, or `undefined` when it is not a valid curve. */
export function parseBackoff(body: unknown): BackoffSettings | undefined {
  const curve = (body as { reconnectBackoff?: Partial<BackoffSettings> } | null)?.reconnectBackoff;
  const base = curve?.baseBackoffMs;
  const max = curve?.maxBackoffMs;
  if (typeof base !== 'number' || typeof max !== 'number' || !Number.isFinite(base) || !Number.isFinite(max)) return undefined;
  if (base < 0 || max < base) return undefined;
  return { baseBackoffMs: base, maxBackoffMs: max };
}

/**
 * The client's reconnect curve: the `backoff` option, else `GET /client/feature-flags` read with the
 * client's token, else `DEFAULT_BACKOFF`. A token the service does not accept there (expired, say)
 * gets a `401` from older servers and the anonymous defaults (`flagship: false`) from newer ones;
 * neither breaks anything, the curve is then just not the project's yet (see `refreshOnce`).
 */
export class ReconnectCurve {
  private settings: Promise<BackoffSettings>;
  /** The curve is the project's: given as an option, or read with a token the service accepted (`flagship: true`). */
  private targeted: boolean;
  private refreshed = false;

  /** @param readFlags `GET /client/feature-flags`'s body; it may reject */
  constructor(
    private readonly readFlags: () => Promise<unknown>,
    given?: BackoffSettings,
  ) {
    this.targeted = given !== undefined;
    this.settings = given ? Promise.resolve(given) : this.read().then((settings) => settings ?? DEFAULT_BACKOFF);
  }

  /** The curve in force, once the first read of the flags (if any) is done. */
  get current(): Promise<BackoffSettings> {
    return this.settings;
  }

  /**
   * A transport opened, so the token works now (`getToken` may have renewed it). When the first read
   * of the flags failed or was anonymous, read them once more to get the project's curve.
   *
   * @param stopped whether the client has ended since, in which case the answer is not wanted
   */
  refreshOnce(stopped: () => boolean): void {
    if (this.targeted || this.refreshed) return;
    this.refreshed = true;
    void this.settings.then(async () => {
      if (this.targeted || stopped()) return;
      const settings = await this.read();
      if (settings && !stopped()) this.settings = Promise.resolve(settings);
    });
  }

  private async read(): Promise<BackoffSettings | undefined> {
    try {
      const body = await this.readFlags();
      const settings = parseBackoff(body);
      if (settings && (body as { flagship?: unknown }).flagship === true) this.targeted = true;
      return settings;
    } catch {
      return undefined;
    }
  }
}
