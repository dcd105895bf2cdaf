/**
 * HTTP helpers for the benchmarks: real requests to the local gateway with the global `fetch`
 * (undici, keep-alive connection pool), and the same project/token setup the e2e tests use
 * (`test/support/api.ts`): a project through the operator route, user tokens through `/auth/token`.
 */
import { randomBytes } from 'node:crypto';

export const BENCH_OPERATOR_KEY = 'bench-operator-key-0123456789abcdef';

export interface ApiResult<T = any> {
  readonly status: number;
  readonly body: T;
  /** Client-side round trip, headers to parsed body. */
  readonly ms: number;
}

export interface RequestOptions {
  readonly method?: string;
  readonly body?: unknown;
  readonly token?: string;
  readonly apiKey?: string;
  readonly headers?: Record<string, string>;
}

export class Api {
  constructor(readonly baseUrl: string) {}

  async request<T = any>(path: string, options: RequestOptions = {}): Promise<ApiResult<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.apiKey) headers['x-service-api-key'] = options.apiKey;
    let body: string | undefined;
    if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers['content-type'] = 'application/json';
    }
    const started = performance.now();
    const response = await fetch(`${this.baseUrl}${path}`, { method: options.method ?? (body ? 'POST' : 'GET'), headers, body });
    const text = await response.text();
    const ms = performance.now() - started;
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // Not JSON: keep the text for the error message.
    }
    return { status: response.status, body: parsed as T, ms };
  }

  /** Like `request`, but throws unless the status is the expected one. */
  async expect<T = any>(status: number | readonly number[], path: string, options: RequestOptions = {}): Promise<ApiResult<T>> {
    const result = await this.request<T>(path, options);
    const wanted = typeof status === 'number' ? [status] : status;
    if (!wanted.includes(result.status)) {
      throw new Error(
        `${options.method ?? 'POST'} ${path}: expected ${wanted.join('/')}, got ${result.status} ${JSON.stringify(result.body)}`,
      );
    }
    return result;
  }
}

export interface BenchProject {
  readonly projectId: string;
  readonly apiKey: string;
  token(userId: string, roles?: string[]): Promise<string>;
}

/** A fresh tenant, so every scenario starts from its own data. */
export async function createProject(api: Api, name: string): Promise<BenchProject> {
  const created = await api.expect(201, '/platform/projects', {
    body: { name },
    headers: { 'x-service-operator-key': BENCH_OPERATOR_KEY },
  });
  const { projectId, apiKey } = created.body as { projectId: string; apiKey: string };
  return {
    projectId,
    apiKey,
    async token(userId, roles) {
      const issued = await api.expect(201, '/auth/token', { apiKey, body: { userId, ...(roles ? { roles } : {}) } });
      return (issued.body as { token: string }).token;
    },
  };
}

export const uniqueId = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex')}`;

/** A realistic chat line: 120 characters, no @mention, no block-listed term. */
export const MESSAGE_CONTENT =
  'Deploy went out at noon; dashboards look calm so far. I will keep an eye on the error budget and report back tonight!!';
