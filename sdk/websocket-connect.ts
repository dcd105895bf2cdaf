import { ChatError, parseRetryAfter, toChatError } from './errors.js';
import type { ClientSettings } from './settings.js';
import { superseded } from './transport.js';
import type { WebSocketConstructor, WebSocketLike } from './types.js';
import { webSocketImplementation } from './websocket-implementation.js';

/** The response of a refused upgrade as the `ws` package's `unexpected-response` event gives it (Node's `IncomingMessage`). */
interface RefusedUpgrade {
  readonly statusCode?: number;
  readonly headers?: Record<string, string | string[] | undefined>;
}

/** A `ws` socket: an EventEmitter besides the WHATWG interface. */
type EmitterSocket = WebSocketLike & { on?: (event: string, listener: (...args: any[]) => void) => unknown };

/** The HTTP status of a refused upgrade, from the `error` event of a `ws` socket without an `unexpected-response` listener. */
function refusalStatus(event: unknown): number | undefined {
  const text = `${(event as { message?: unknown })?.message ?? ''} ${(event as { error?: { message?: unknown } })?.error?.message ?? ''}`;
  const status = /Unexpected server response: (\d{3})/.exec(text)?.[1];
  return status ? Number(status) : undefined;
}

/** A refused upgrade: `rate_limited` for a 429 (with `retryAfter` when the response could be read), else `websocket_refused`. */
function refusalError(status: number, retryAfter?: number): ChatError {
  return new ChatError(status === 429 ? 'rate_limited' : 'websocket_refused', `The WebSocket upgrade was refused with HTTP ${status}`, {
    status,
    ...(retryAfter === undefined ? {} : { retryAfter }),
  });
}

/**
 * The room's WebSocket URL: `baseUrl` with a `ws(s)` scheme and the spec's path `/ws/rooms/<roomId>`
 * (served by the local gateway and, on AWS, by CloudFront in front of the WebSocket API), or the
 * legacy `wsUrl` of a deployment without CloudFront (`edge: false`) with `roomId` in the query. The
 * token rides in the query either way: browsers cannot set headers on a WebSocket. `batch=1` asks for
 * batch frames (the SDK unpacks them). Exported for the post-deploy smoke test, which must connect as
 * clients do.
 */
export function webSocketUrl(
  settings: Pick<ClientSettings, 'baseUrl' | 'wsUrl' | 'roomId' | 'cache'> & Partial<Pick<ClientSettings, 'batch'>>,
  token: string,
  history: number,
): string {
  const query = new URLSearchParams();
  if (settings.wsUrl) query.set('roomId', settings.roomId);
  query.set('token', token);
  // Always explicit: the server's default may differ from the SDK's.
  query.set('history', String(history));
  if (settings.cache) query.set('cache', '1');
  // Left out unless asked for, so a caller reading raw frames (the smoke test) keeps single frames.
  if (settings.batch) query.set('batch', '1');
  if (settings.wsUrl) return `${settings.wsUrl}${settings.wsUrl.includes('?') ? '&' : '?'}${query}`;
  return `${settings.baseUrl.replace(/^http/, 'ws')}/ws/rooms/${encodeURIComponent(settings.roomId)}?${query}`;
}

/**
 * Opens the room's WebSocket, asking for `history` messages. `onOpen` runs inside the `open` event,
 * so the socket's listeners are in place before its first frame; it returns false to discard the
 * socket. Resolves with the failure, if any: a refused upgrade carries its status where the
 * implementation shows it (the `ws` package does, with `Retry-After` on a 429; browsers do not).
 */
export function connectWebSocket(
  settings: ClientSettings,
  token: string,
  history: number,
  onOpen: (socket: WebSocketLike) => boolean,
): Promise<ChatError | undefined> {
  const implementation = webSocketImplementation(settings.WebSocket);
  if (!(implementation instanceof Promise)) return openWebSocket(implementation, settings, token, history, onOpen);
  return implementation.then((Constructor) =>
    Constructor
      ? openWebSocket(Constructor, settings, token, history, onOpen)
      : new ChatError(
          'websocket_unavailable',
          'No WebSocket implementation: install the ws package (Node 20) or pass the WebSocket option',
        ),
  );
}

function openWebSocket(
  Constructor: WebSocketConstructor,
  settings: ClientSettings,
  token: string,
  history: number,
  onOpen: (socket: WebSocketLike) => boolean,
): Promise<ChatError | undefined> {
  return new Promise((resolve) => {
    let settled = false;
    let socket: WebSocketLike;
    const settle = (error: ChatError | undefined) => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      resolve(error);
      return true;
    };
    const timer = setTimeout(() => {
      if (settle(new ChatError('connect_timeout', `The WebSocket did not open within ${settings.connectTimeoutMs} ms`))) socket.close();
    }, settings.connectTimeoutMs);
    try {
      socket = new Constructor(webSocketUrl(settings, token, history));
    } catch (error) {
      settle(toChatError(error, 'websocket_failed'));
      return;
    }
    // With an `unexpected-response` listener the `ws` package leaves aborting the handshake to it.
    const emitter = socket as EmitterSocket;
    if (typeof emitter.on === 'function') {
      emitter.on('unexpected-response', (_request: unknown, response: RefusedUpgrade) => {
        const header = response?.headers?.['retry-after'];
        const retryAfter = parseRetryAfter(Array.isArray(header) ? header[0] : header);
        settle(refusalError(response?.statusCode ?? 0, retryAfter));
        try {
          socket.close();
        } catch {
          // Already aborted.
        }
      });
    }
    socket.addEventListener('open', () => {
      if (settled) return;
      if (onOpen(socket)) settle(undefined);
      else {
        settle(superseded());
        socket.close();
      }
    });
    socket.addEventListener('error', (event) => {
      const status = refusalStatus(event);
      settle(status === undefined ? new ChatError('websocket_failed', 'The WebSocket failed to open') : refusalError(status));
    });
    socket.addEventListener('close', (event) => {
      settle(new ChatError('websocket_failed', `The WebSocket closed before opening (${(event as { code?: number })?.code ?? '?'})`));
    });
  });
}
