import { ChatError, errorFromBody, toChatError } from './errors.js';
import type { ClientSettings } from './settings.js';
import { SseParser } from './sse-parser.js';
import { type RoomTransport, superseded, type TransportHost } from './transport.js';
import type { Message } from './types.js';
import { isMessage } from './wire-messages.js';

/** Three missed 15 s heartbeats: the SSE stream is dead even if the socket looks open. */
const SSE_IDLE_TIMEOUT_MS = 45_000;
const DEFAULT_SSE_RETRY_MS = 1000;

/**
 * The room's stream URL, `<base>/rooms/<roomId>/stream?token=<JWT>`. The token rides in the query,
 * not in `Authorization`: on AWS CloudFront reaches the stream's function URL with Origin Access
 * Control, which signs the request in the `Authorization` header and so replaces a viewer's bearer
 * token (and `EventSource` cannot set headers anyway). `sseUrl`, where given, is the legacy base.
 */
export function sseStreamUrl(settings: Pick<ClientSettings, 'sseUrl' | 'roomId'>, token: string): string {
  return `${settings.sseUrl}/rooms/${encodeURIComponent(settings.roomId)}/stream?${new URLSearchParams({ token })}`;
}

/**
 * The room over `GET /rooms/{roomId}/stream`, read with `fetch` and the SDK's own parser (EventSource
 * cannot run in Node). It resumes with `Last-Event-ID`; messages only.
 */
export class SseTransport implements RoomTransport {
  readonly state = 'sse';
  private readonly abort = new AbortController();
  private closed = false;

  constructor(private readonly host: TransportHost) {}

  async open(): Promise<ChatError | undefined> {
    const { log, rest, settings } = this.host;
    await log.startIfNew();
    if (this.closed) return superseded();
    const token = await rest.token();
    const timer = setTimeout(() => this.abort.abort(), settings.connectTimeoutMs);
    let response: Response;
    try {
      response = await settings.fetch(sseStreamUrl(settings, token), {
        headers: {
          accept: 'text/event-stream',
          'last-event-id': String(log.resumeAfter() ?? 0),
        },
        signal: this.abort.signal,
      });
    } catch (error) {
      return new ChatError('network_error', `The SSE stream did not open: ${(error as Error).message}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
    if (this.closed) {
      this.abort.abort();
      return superseded();
    }
    const contentType = response.headers.get('content-type') ?? '';
    if (response.status !== 200 || !contentType.includes('text/event-stream') || !response.body) {
      const error = await streamRefusal(response);
      this.abort.abort();
      return error;
    }
    this.host.opened(this);
    void this.read(response.body);
    return undefined;
  }

  close(): void {
    this.closed = true;
    this.abort.abort();
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser();
    let idle = setTimeout(() => this.abort.abort(), SSE_IDLE_TIMEOUT_MS);
    try {
      for (;;) {
        const { value, done } = await reader.read();
        clearTimeout(idle);
        if (this.closed) return;
        if (done) break;
        idle = setTimeout(() => this.abort.abort(), SSE_IDLE_TIMEOUT_MS);
        const messages = parser
          .push(decoder.decode(value, { stream: true }))
          .flatMap((event) => (event.event === 'message' ? messagesInEvent(event.data) : []));
        if (messages.length) this.host.log.deliver(messages);
      }
    } catch (error) {
      clearTimeout(idle);
      if (!this.closed) this.host.lost(this, toChatError(error, 'connection_lost'));
      return;
    }
    // The stream ended on purpose (its maximum duration): come back after its `retry`, trying the WebSocket first.
    this.host.lost(this, undefined, parser.retryMs ?? DEFAULT_SSE_RETRY_MS);
  }
}

/** A `message` event's data: one message, or nothing when it is not one (ignored like any unknown event). */
function messagesInEvent(data: string): Message[] {
  try {
    const message: unknown = JSON.parse(data);
    return isMessage(message) ? [message] : [];
  } catch {
    return [];
  }
}

/** Why a response that should have opened the stream did not: the service's error, or `unexpected_response` for a 2xx of another type. */
async function streamRefusal(response: Response): Promise<ChatError> {
  let parsed: unknown;
  try {
    const text = await response.text();
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (response.ok) return new ChatError('unexpected_response', `Expected text/event-stream, got ${response.headers.get('content-type')}`);
  return errorFromBody(parsed, response.status, response.headers.get('retry-after'));
}
