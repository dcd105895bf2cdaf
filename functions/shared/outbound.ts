import { type ClientRequest, Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { type ClientHttp2Session, type ClientHttp2Stream, connect as http2Connect, constants as http2Constants } from 'node:http2';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';
import { config } from '#shared/config';
import { createGuardedLookup, type GuardOptions, isRefusedTarget, PRIVATE_ADDRESS_ERROR_CODE } from '#shared/outbound-guard';

/**
 * The one HTTP client for every call out of the service (webhook deliveries, push providers, AI
 * providers, chat bridges): a timeout over connecting and the whole answer, no redirects ever
 * followed, a cap on the answer's size, keep-alive connections reused across calls, and the SSRF
 * guard on URLs a tenant chose. HTTP/1.1 by default; HTTP/2 on request (APNs speaks nothing else),
 * with one multiplexed session per origin kept open across calls.
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
  /**
   * `http2`: over one HTTP/2 session per origin, kept open across calls and shared by concurrent
   * ones (Apple asks APNs providers to send many pushes on one connection rather than connect per push).
   * @default 'http1'
   */
  readonly protocol?: 'http1' | 'http2';
  /** A PEM certificate trusted beside the public roots (tests: a local server's self-signed one), never instead of them. */
  readonly ca?: string;
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
  readonly ca: string | undefined;
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
    ca: request.ca,
  };
  if (request.protocol === 'http2') return sendHttp2(plan, request.target);
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
        {
          method: plan.method,
          headers: plan.headers,
          agent,
          ...(plan.lookup ? { lookup: plan.lookup } : {}),
          ...(plan.ca ? { ca: withPublicRoots(plan.ca) } : {}),
        },
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

/** `ca` alone would replace the public roots: an extra certificate is trusted beside them. */
const withPublicRoots = (ca: string) => [...rootCertificates, ca];

/**
 * How long an HTTP/2 session may sit without a stream before it is closed. Longer than the
 * HTTP/1.1 idle timeout: HTTP/2 servers announce a close with GOAWAY rather than dropping the
 * connection unseen, and a push burst after a pause then skips the TLS handshake.
 */
const IDLE_SESSION_TIMEOUT_MS = 60_000;

/**
 * Module scope, like the agents: one session per kind of target, origin and trusted certificate.
 * The kind is part of the key for the same reason as the agents' pools: a session opened for a
 * trusted provider never carries a request to a user-supplied URL.
 */
const sessions = new Map<string, ClientHttp2Session>();

function sessionFor(plan: Plan, target: OutboundTarget): { session: ClientHttp2Session; reused: boolean } {
  const key = `${target}\n${plan.url.origin}\n${plan.ca ?? ''}`;
  const existing = sessions.get(key);
  if (existing && !existing.closed && !existing.destroyed) return { session: existing, reused: true };
  const session = http2Connect(plan.url.origin, {
    ...(plan.lookup ? { lookup: plan.lookup } : {}),
    ...(plan.ca ? { ca: withPublicRoots(plan.ca) } : {}),
  });
  const evict = () => {
    if (sessions.get(key) === session) sessions.delete(key);
  };
  // Listening for 'error' is what keeps a failed session from crashing the process; its streams
  // are destroyed with the error and report it themselves.
  session.on('error', evict);
  // After a GOAWAY the session takes no new streams; the ones under way finish on it.
  session.on('goaway', evict);
  session.on('close', evict);
  session.setTimeout(IDLE_SESSION_TIMEOUT_MS, () => {
    evict();
    session.close();
  });
  // An idle session must not keep a process alive; a call under way holds its own timer.
  session.unref();
  sessions.set(key, session);
  return { session, reused: false };
}

/** An HTTP/2 exchange that failed in a way that shows the server did not process the request: safe to send again. */
interface Unsent {
  readonly unsent: OutboundError;
}
const isUnsent = (outcome: OutboundResponse | Unsent): outcome is Unsent => 'unsent' in outcome;

/**
 * Failures that mean the request was never processed: the session was closing or closed when the
 * stream was opened, the stream was still waiting for the session, or the kept session turned out
 * dead when written to. A stream the server refused (`REFUSED_STREAM`, what streams past a GOAWAY
 * get) is unprocessed by definition (RFC 9113 §8.7).
 */
const UNSENT_CODES = new Set([
  'ERR_HTTP2_GOAWAY_SESSION',
  'ERR_HTTP2_INVALID_SESSION',
  'ERR_HTTP2_STREAM_CANCEL',
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
]);

/**
 * One call over HTTP/2. A request a kept session did not process (the server's GOAWAY, a frozen
 * Lambda) is tried once more on a new session, as the HTTP/1.1 path does with a stale socket.
 */
async function sendHttp2(plan: Plan, target: OutboundTarget): Promise<OutboundResponse> {
  const { session, reused } = sessionFor(plan, target);
  const first = await streamExchange(plan, session);
  if (!isUnsent(first)) return first;
  if (!reused) throw first.unsent;
  // `close` rather than `destroy`: other calls' streams on it end by themselves.
  session.close();
  const second = await streamExchange(plan, sessionFor(plan, target).session);
  if (isUnsent(second)) throw second.unsent;
  return second;
}

/**
 * The failure a stream reports. Streams still waiting for the session are cancelled with
 * `ERR_HTTP2_STREAM_CANCEL` whose cause is the session's error (a TLS refusal, a refused
 * connection, the SSRF guard): the cause is the useful part.
 */
const rootCause = (error: unknown): NodeJS.ErrnoException =>
  (error instanceof Error && error.cause instanceof Error ? error.cause : error) as NodeJS.ErrnoException;

/** One request on one stream; settles by the deadline at the latest, cancelling the stream. */
function streamExchange(plan: Plan, session: ClientHttp2Session): Promise<OutboundResponse | Unsent> {
  return new Promise((resolve, reject) => {
    const remaining = plan.deadline - Date.now();
    if (remaining <= 0) return reject(new OutboundError('timeout', `timed out after ${plan.timeoutMs} ms`));
    let settled = false;
    let stream: ClientHttp2Stream | undefined;
    let status: number | undefined;
    let headers: IncomingHttpHeaders = {};
    const settle = () => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      return true;
    };
    const finish = (outcome: OutboundResponse | Unsent) => {
      if (settle()) resolve(outcome);
    };
    // Cancelling the stream leaves the session to the other calls on it.
    const fail = (error: OutboundError) => {
      if (!settle()) return;
      if (stream && !stream.closed) stream.close(http2Constants.NGHTTP2_CANCEL);
      reject(error);
    };
    const timer = setTimeout(() => fail(new OutboundError('timeout', `timed out after ${plan.timeoutMs} ms`, status)), remaining);
    const tooLarge = () =>
      fail(new OutboundError('response_too_large', `the answer is larger than ${plan.maxResponseBytes} bytes`, status));
    const broken = (error: unknown) => {
      const cause = rootCause(error);
      if (cause.code === PRIVATE_ADDRESS_ERROR_CODE) return fail(new OutboundError('private_address', cause.message));
      const code = (error as NodeJS.ErrnoException | undefined)?.code ?? '';
      const unsent = status === undefined && (stream?.rstCode === http2Constants.NGHTTP2_REFUSED_STREAM || UNSENT_CODES.has(code));
      if (unsent) finish({ unsent: networkError(cause, status) });
      else fail(networkError(cause, status));
    };

    try {
      stream = session.request({
        ...plan.headers,
        ':method': plan.method,
        ':path': `${plan.url.pathname}${plan.url.search}`,
      });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? '';
      // The session closed or got a GOAWAY between the lookup and now; else Node refused a header.
      if (UNSENT_CODES.has(code)) return finish({ unsent: networkError(error as NodeJS.ErrnoException) });
      return fail(new OutboundError('invalid_request', (error as Error).message, undefined, { cause: error }));
    }
    const chunks: Buffer[] = [];
    let size = 0;
    stream.on('response', (answer) => {
      status = Number(answer[':status']);
      const { ':status': _, ...rest } = answer;
      headers = rest as IncomingHttpHeaders;
      if (Number(answer['content-length']) > plan.maxResponseBytes) tooLarge();
    });
    stream.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > plan.maxResponseBytes) return tooLarge();
      chunks.push(chunk);
    });
    stream.on('end', () => {
      if (status === undefined) return broken(new Error('the stream ended without an answer'));
      finish({ status, headers, body: Buffer.concat(chunks, size) });
    });
    stream.on('error', broken);
    stream.on('close', () => broken(new Error(`the stream closed before the answer was complete (code ${stream?.rstCode})`)));
    stream.end(plan.body);
  });
}
