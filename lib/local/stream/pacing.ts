const BACKOFF_FIRST_MS = 100;
const BACKOFF_MAX_MS = 5000;

/** Resolves after `ms`, or at once when `signal` aborts or a waker in `wakers` is called. */
export function pause(ms: number, signal: AbortSignal, wakers?: Set<() => void>): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      wakers?.delete(done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
    wakers?.add(done);
  });
}

/** Retries back off from 100 ms, doubling to 5 s, and never give up: AWS retries until the record expires. */
export class Backoff {
  private attempt = 0;
  next(): number {
    return Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** this.attempt++);
  }
  reset(): void {
    this.attempt = 0;
  }
}

/** Logs the first error of a burst per operation, and the recovery, instead of one line per retry. */
export class BurstLog {
  private readonly failing = new Set<string>();
  report(operation: string, error: unknown): void {
    if (this.failing.has(operation)) return;
    this.failing.add(operation);
    console.error(`stream poller: ${operation} failed, retrying until it works`, error);
  }
  clear(operation: string): void {
    if (this.failing.delete(operation)) console.info(`stream poller: ${operation} works again`);
  }
}

export const errorName = (error: unknown): string | undefined => (error as { name?: string } | null)?.name;
