import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the three chat-platform stand-ins (`slack.ts`, `discord.ts`, `matrix.ts`) share: an HTTP
 * server on 127.0.0.1 that records every API request it gets, knows the token each channel expects,
 * fails a channel on request, and serves all of it under `/_stand-in/` too, so a test process that
 * did not start the server (the shared runtime's stand-ins run in vitest's main process) reads and
 * steers it over HTTP (`client.ts`).
 */

export type PlatformName = 'slack' | 'discord' | 'matrix';

/** One API request as the stand-in got it and what it answered. */
export interface RecordedPost {
  readonly platform: PlatformName;
  /** The channel it was for: Slack's channel, Discord's webhook id or channel id, Matrix's room id. */
  readonly target: string;
  readonly method: string;
  /** The path and query as sent. */
  readonly path: string;
  readonly authorization: string | undefined;
  readonly body: any;
  /** The HTTP status answered. */
  readonly status: number;
  /** Stored as a new message of the channel (not refused, failed or a repeated Matrix transaction). */
  readonly accepted: boolean;
  /** Epoch ms the request arrived. */
  readonly receivedAt: number;
}

/** How a channel fails: Slack's `{ ok: false, error }` at 200 with `error`, else an HTTP status. */
export interface FailureRule {
  /** @default 500 (or 200 with `error` on Slack) */
  readonly status?: number;
  /** Slack only: the `error` of a `{ ok: false }` answer. */
  readonly error?: string;
  /** Seconds, sent as `Retry-After` (429s). */
  readonly retryAfter?: number;
  /** How many requests fail before the channel works again. @default every one */
  readonly times?: number;
}

/** The state a platform's request handler reads and writes. */
export interface StandInState {
  readonly platform: PlatformName;
  readonly posts: RecordedPost[];
  /** The token a channel expects, by target. */
  readonly credentials: Map<string, string>;
  readonly failures: Map<string, FailureRule>;
  /** The failure rule for a request to `target` now (counting it down), if one applies. */
  takeFailure(target: string): FailureRule | undefined;
}

export interface ApiRequest {
  readonly method: string;
  /** The path with the server's prefix, without the query. */
  readonly pathname: string;
  readonly search: URLSearchParams;
  readonly url: string;
  readonly authorization: string | undefined;
  readonly body: any;
  readonly receivedAt: number;
}

export type PlatformHandler = (
  request: ApiRequest,
  state: StandInState,
) => { status: number; body: unknown; headers?: Record<string, string> };

export interface PlatformStandIn {
  /** The base URL to give the service (`SLACK_API_BASE_URL`, `DISCORD_API_BASE_URL`, a bridge's `homeserverUrl`). */
  readonly url: string;
  readonly posts: readonly RecordedPost[];
  /** The token requests for `target` must carry; unregistered targets take any well-formed token. */
  expect(target: string, token: string): void;
  fail(target: string, rule?: FailureRule): void;
  heal(target: string): void;
  close(): Promise<void>;
}

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  void response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function parse(text: string): any {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return text;
  }
}

/** Starts a platform stand-in: `handle` speaks the platform's API, this module the rest. */
export async function startPlatformStandIn(platform: PlatformName, handle: PlatformHandler): Promise<PlatformStandIn> {
  const posts: RecordedPost[] = [];
  const credentials = new Map<string, string>();
  const failures = new Map<string, FailureRule>();
  const state: StandInState = {
    platform,
    posts,
    credentials,
    failures,
    takeFailure(target) {
      const rule = failures.get(target);
      if (!rule) return undefined;
      if (rule.times !== undefined) {
        if (rule.times <= 1) failures.delete(target);
        else failures.set(target, { ...rule, times: rule.times - 1 });
      }
      return rule;
    },
  };

  const control = (method: string, pathname: string, search: URLSearchParams, body: any, response: ServerResponse) => {
    const target = String(body?.target ?? search.get('target') ?? '');
    if (pathname === '/_stand-in/posts' && method === 'GET') {
      return json(response, 200, { posts: target ? posts.filter((post) => post.target === target) : posts });
    }
    if (!target) return json(response, 400, { error: 'target is required' });
    if (pathname === '/_stand-in/credentials' && method === 'POST') {
      credentials.set(target, String(body.token));
      return json(response, 200, { ok: true });
    }
    if (pathname === '/_stand-in/failures' && method === 'POST') {
      const { target: _target, ...rule } = body as FailureRule & { target: string };
      failures.set(target, rule);
      return json(response, 200, { ok: true });
    }
    if (pathname === '/_stand-in/failures' && method === 'DELETE') {
      failures.delete(target);
      return json(response, 200, { ok: true });
    }
    json(response, 404, { error: `no control ${method} ${pathname}` });
  };

  const server = createServer(async (request, response) => {
    const receivedAt = Date.now();
    const text = await readBody(request);
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const method = request.method ?? 'GET';
    if (url.pathname.startsWith('/_stand-in/')) return control(method, url.pathname, url.searchParams, parse(text), response);
    const answer = handle(
      {
        method,
        pathname: url.pathname,
        search: url.searchParams,
        url: request.url ?? '/',
        authorization: request.headers.authorization,
        body: parse(text),
        receivedAt,
      },
      state,
    );
    json(response, answer.status, answer.body, answer.headers);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    posts,
    expect: (target, token) => void credentials.set(target, token),
    fail: (target, rule = {}) => void failures.set(target, rule),
    heal: (target) => void failures.delete(target),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Records a request and builds its answer. */
export function recorded(
  state: StandInState,
  request: ApiRequest,
  target: string,
  answer: { status: number; body: unknown; headers?: Record<string, string>; accepted?: boolean },
) {
  state.posts.push({
    platform: state.platform,
    target,
    method: request.method,
    path: request.url,
    authorization: request.authorization,
    body: request.body,
    status: answer.status,
    accepted: answer.accepted ?? false,
    receivedAt: request.receivedAt,
  });
  return answer;
}
