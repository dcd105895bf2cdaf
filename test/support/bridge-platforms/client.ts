import type { FailureRule, RecordedPost } from './stand-in';

/**
 * A chat-platform stand-in steered and read over HTTP (its `/_stand-in/` routes), from any process:
 * the shared runtime's stand-ins run in vitest's main process, the tests and the bench elsewhere.
 */
export interface StandInClient {
  readonly url: string;
  /** Requests for `target` must carry `token` from now on (others get the platform's auth error). */
  expect(target: string, token: string): Promise<void>;
  /** Fails requests for `target` (every one, or `rule.times`). */
  fail(target: string, rule?: FailureRule): Promise<void>;
  heal(target: string): Promise<void>;
  /** Every request the stand-in got for `target`, oldest first. */
  posts(target: string): Promise<RecordedPost[]>;
  /**
   * Waits until `target` has `count` requests matching `which` (by default: stored messages), and
   * returns them; after the time runs out, returns what there is. `settleMs` keeps looking that
   * long after the count is reached, so a test sees a duplicate that comes late.
   */
  waitForPosts(target: string, count: number, options?: WaitOptions): Promise<RecordedPost[]>;
}

export interface WaitOptions {
  /** @default 10_000 */
  readonly timeoutMs?: number;
  /** @default 0 */
  readonly settleMs?: number;
  /** @default stored messages only (`post.accepted`) */
  readonly which?: (post: RecordedPost) => boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function standInClient(url: string): StandInClient {
  const control = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}/_stand-in/${path}`, {
      method,
      ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    if (!response.ok) throw new Error(`stand-in control ${method} ${path}: ${response.status} ${await response.text()}`);
    return response.json() as Promise<any>;
  };
  const posts = async (target: string) => (await control('GET', `posts?target=${encodeURIComponent(target)}`)).posts as RecordedPost[];
  return {
    url,
    expect: async (target, token) => void (await control('POST', 'credentials', { target, token })),
    fail: async (target, rule = {}) => void (await control('POST', 'failures', { target, ...rule })),
    heal: async (target) => void (await control('DELETE', `failures?target=${encodeURIComponent(target)}`)),
    posts,
    async waitForPosts(target, count, options = {}) {
      const which = options.which ?? ((post: RecordedPost) => post.accepted);
      const deadline = Date.now() + (options.timeoutMs ?? 10_000);
      let found: RecordedPost[] = [];
      let settleUntil: number | undefined;
      while (Date.now() < (settleUntil ?? deadline)) {
        found = (await posts(target)).filter(which);
        if (found.length >= count && settleUntil === undefined) {
          if (!options.settleMs) break;
          settleUntil = Math.min(deadline, Date.now() + options.settleMs);
        }
        await sleep(25);
      }
      return found;
    },
  };
}
