import { type ClientRequest, Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { config } from '#shared/config';
import { createGuardedLookup, type GuardOptions, isRefusedTarget, PRIVATE_ADDRESS_ERROR_CODE } from '#shared/outbound-guard';

/**
 * The one HTTP client for every call out of the service (webhook deliveries, push providers, AI
 * providers, chat bridges): a timeout over connecting and the whole answer, no redirects ever
 * followed, a cap on the answer's size, keep-alive connections reused across calls, and the SSRF
 * guard on URLs a tenant chose.
 */

/**
 * Who chose the URL. `user`: a tenant (a webhook target, a web push endpoint), so the SSRF guard
 * refuses private hosts by name, by literal address and by resolved address at connect time.
 * `provider`: a base URL from the operator's settings (`https://fcm.googleapis.com`), trusted, so
 * no address guard; timeout, size cap and no redirects still apply.
 */
export type OutboundTarget = 'user' | 'provider';

export interface OutboundRequest {
  readonly target: OutboundTarget;
  readonly url: string | URL;
  /** @default 'GET' */
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent with its `content-length`. */
  readonly body?: string | Buffer;
  /**
   * Connecting, sending and receiving the whole answer; past it the connection is destroyed.
   * @default config.OUTBOUND_TIMEOUT_MS
   */
  readonly timeoutMs?: number;
  /**
   * Bytes of body accepted; a bigger answer is cut off, its connection destroyed, and reported as `response_too_large`.
   * @default config.OUTBOUND_MAX_RESPONSE_BYTES
   */
  readonly maxResponseBytes?: number;
}

/** Any complete answer, whatever its status: a 3xx is returned as it is, never followed. */
export interface OutboundResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

export type OutboundErrorCode = 'invalid_request' | 'private_address' | 'timeout' | 'response_too_large' | 'network';

/** The only error `send` rejects with. `status` is set when the answer's status line had arrived. */
export class OutboundError extends Error {
  constructor(
    readonly code: OutboundErrorCode,
    message: string,
    readonly status?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'OutboundError';
  }
}

/**
 * How long a kept-alive connection may sit unused before it is closed: below the 5 s idle timeout
 * of Node servers and most load balancers' defaults, so a reused connection is rarely one the other
 * side already dropped.
 */
const IDLE_SOCKET_TIMEOUT_MS = 4000;

const agentOptions = { keepAlive: true, timeout: IDLE_SOCKET_TIMEOUT_MS };
/**
 * Module scope so a warm instance reuses connections. One pool per kind of target: an agent keys
 * its connections by host and port, not by `lookup`, so a connection opened for a trusted provider
 * must never be handed to a user-supplied URL.
 */
const agents = {
  user: { 'http:': new HttpAgent(agentOptions), 'https:': new HttpsAgent(agentOptions) },
  provider: { 'http:': new HttpAgent(agentOptions), 'https:': new HttpsAgent(agentOptions) },
} as const;

/** Errors of a kept-alive connection the other side closed while it sat idle (or the Lambda was frozen). */
const STALE_SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED']);
const STALE_SOCKET = Symbol('stale socket');

interface Plan {
  readonly url: URL;
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer | undefined;
  readonly lookup: LookupFunction | undefined;
  readonly deadline: number;
  readonly timeoutMs: number;
  readonly maxResponseBytes: number;
}

/**
 * Makes one HTTP(S) call and buffers its answer. Never follows redirects and never hangs: it
 * settles by `timeoutMs` at the latest.
 * @param guard the SSRF guard's options for a `user` target (tests set them; the service keeps the defaults)
 * @throws OutboundError `invalid_request` (bad URL, method or header), `private_address` (a user URL
 * to a private host, by name, literal or resolved address), `timeout`, `response_too_large`, `network`
 */
export async function send(request: OutboundRequest, guard: GuardOptions = {}): Promise<OutboundResponse> {
  const url = parseUrl(request.url);
  let lookup: LookupFunction | undefined;
  if (request.target === 'user') {
    if (isRefusedTarget(url, guard)) throw new OutboundError('private_address', `${url.hostname} is a private address`);
    lookup = createGuardedLookup(guard);
  }
  const body = typeof request.body === 'string' ? Buffer.from(request.body, 'utf8') : request.body;
  const timeoutMs = request.timeoutMs ?? config.OUTBOUND_TIMEOUT_MS;
  const plan: Plan = {
    url,
    method: request.method ?? 'GET',
    headers: { ...request.headers, ...(body ? { 'content-length': String(body.length) } : {}) },
    body,
    lookup,
    deadline: Date.now() + timeoutMs,
    timeoutMs,
    maxResponseBytes: request.maxResponseBytes ?? config.OUTBOUND_MAX_RESPONSE_BYTES,
  };
  const first = await exchange(plan, agents[request.target][url.protocol as 'http:' | 'https:']);
  if (first !== STALE_SOCKET) return first;
  // Node's advice for a reused connection that fails before any answer: try once more on a new
  // one. The request most likely never reached the server; webhook receivers dedupe by delivery id.
  const second = await exchange(plan, false);
  if (second === STALE_SOCKET) throw new OutboundError('network', 'the connection was reset before an answer');
  return second;
}

function parseUrl(value: string | URL): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new OutboundError('invalid_request', 'the URL is not a valid absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new OutboundError('invalid_request', `${url.protocol} URLs are not supported`);
  return url;
}

const networkError = (error: NodeJS.ErrnoException, status?: number) =>
  new OutboundError('network', error.code ? `${error.code}: ${error.message}` : error.message, status, { cause: error });

/** One request on `agent` (`false`: a new connection); `STALE_SOCKET` when a reused connection turned out dead. */
function exchange(plan: Plan, agent: HttpAgent | false): Promise<OutboundResponse | typeof STALE_SOCKET> {
  return new Promise((resolve, reject) => {
    const remaining = plan.deadline - Date.now();
    if (remaining <= 0) return reject(new OutboundError('timeout', `timed out after ${plan.timeoutMs} ms`));
    let settled = false;
    let status: number | undefined;
    let outgoing: ClientRequest | undefined;
    const finish = (outcome: OutboundResponse | typeof STALE_SOCKET) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    // Destroying the request destroys its socket: a half-read answer never goes back to the pool.
    const fail = (error: OutboundError) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outgoing?.destroy();
      reject(error);
    };
    const timer = setTimeout(() => fail(new OutboundError('timeout', `timed out after ${plan.timeoutMs} ms`, status)), remaining);
    const tooLarge = () =>
      fail(new OutboundError('response_too_large', `the answer is larger than ${plan.maxResponseBytes} bytes`, status));

    const call = plan.url.protocol === 'https:' ? httpsRequest : httpRequest;
    try {
      outgoing = call(
        plan.url,
        { method: plan.method, headers: plan.headers, agent, ...(plan.lookup ? { lookup: plan.lookup } : {}) },
        (response) => {
          status = response.statusCode ?? 0;
          if (Number(response.headers['content-length']) > plan.maxResponseBytes) return tooLarge();
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > plan.maxResponseBytes) return tooLarge();
            chunks.push(chunk);
          });
          response.on('end', () => finish({ status: status ?? 0, headers: response.headers, body: Buffer.concat(chunks, size) }));
          response.on('error', (error) => fail(networkError(error, status)));
          response.on('close', () => {
            if (!response.complete) fail(new OutboundError('network', 'the connection closed before the answer was complete', status));
          });
        },
      );
    } catch (error) {
      // Node refuses a bad method or header value synchronously.
      return fail(new OutboundError('invalid_request', (error as Error).message, undefined, { cause: error }));
    }
    outgoing.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === PRIVATE_ADDRESS_ERROR_CODE) return fail(new OutboundError('private_address', error.message));
      if (agent && outgoing?.reusedSocket && status === undefined && STALE_SOCKET_CODES.has(error.code ?? '')) return finish(STALE_SOCKET);
      fail(networkError(error, status));
    });
    outgoing.end(plan.body);
  });
}
