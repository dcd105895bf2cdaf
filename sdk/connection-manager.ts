import { type BackoffSettings, backoffDelay, ReconnectCurve } from './backoff.js';
import { ChatError, classify, retryAfterMs, toChatError } from './errors.js';
import { PollingTransport } from './polling-transport.js';
import { SseTransport } from './sse-transport.js';
import type { ClientServices, RoomTransport, TransportHost } from './transport.js';
import type { ConnectionState, Transport } from './types.js';
import { explainRefusal, WebSocketTransport } from './websocket-transport.js';

const TRANSPORTS: Record<Transport, new (host: TransportHost) => RoomTransport> = {
  websocket: WebSocketTransport,
  sse: SseTransport,
  polling: PollingTransport,
};

/**
 * The connection's state machine (the diagram in `sdk/README.md`): walks the transports best first
 * and keeps the first that opens, reconnects with backoff when it is lost, tries the WebSocket again
 * while on SSE or polling, and ends for good when the service refuses the client.
 */
export class ConnectionManager {
  private current: ConnectionState = 'connecting';
  private closed = false;
  private error: ChatError | undefined;
  /** The transport carrying the room, and the one being opened (an attempt, or a WebSocket upgrade). */
  private transport: RoomTransport | undefined;
  private candidate: RoomTransport | undefined;
  /** Bumped whenever the transports are torn down: a cycle, a retry or an upgrade of an older one sees the change and stops. */
  private generation = 0;
  /** Failed attempts since the last transport opened: the backoff exponent. */
  private attempt = 0;
  private authRetried = false;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  private upgradeTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly curve: ReconnectCurve;
  private readonly host: TransportHost;

  /** Starts connecting at once. @param backoff the `backoff` option: overrides the curve of the feature flags */
  constructor(
    private readonly services: ClientServices,
    backoff: BackoffSettings | undefined,
  ) {
    // Before the first attempt, so the flags are read with the first token `getToken` gives.
    this.curve = new ReconnectCurve(() => services.rest.featureFlags(), backoff);
    this.host = {
      ...services,
      opened: (transport) => this.opened(transport),
      lost: (transport, error, minDelayMs) => this.lost(transport, error, minDelayMs),
    };
    void this.cycle();
  }

  get state(): ConnectionState {
    return this.current;
  }

  /** The error that ended the client, or the last one a transport failed with. */
  get lastError(): ChatError | undefined {
    return this.error;
  }

  /** After `close()` or a refusal for good. */
  get ended(): boolean {
    return this.closed;
  }

  /** The WebSocket carrying the room, if that is what carries it. */
  get socket(): WebSocketTransport | undefined {
    return this.transport instanceof WebSocketTransport ? this.transport : undefined;
  }

  close(): void {
    if (this.closed) return;
    this.end(new ChatError('closed', 'The room client was closed'));
  }

  /** One pass over the transports, best first; the first that opens carries the room. */
  private async cycle(): Promise<void> {
    this.teardown();
    const generation = this.generation;
    for (const kind of this.services.settings.transports) {
      const transport = new TRANSPORTS[kind](this.host);
      this.candidate = transport;
      const refusal = await transport.open().catch((error: unknown) => toChatError(error));
      if (!refusal || this.closed || generation !== this.generation) return;
      const error = await explainRefusal(refusal, this.services.rest);
      if (this.closed || generation !== this.generation) return;
      this.error = error;
      const verdict = classify(error);
      if (verdict === 'fatal') {
        // An expired token may be renewed by getToken: one more attempt with a fresh one.
        if (error.status === 401 && this.services.settings.getToken && !this.authRetried) {
          this.authRetried = true;
          this.reconnect();
        } else {
          this.fail(error);
        }
        return;
      }
      // A 429 is about the client, not the transport: the next one would be refused too.
      if (verdict === 'rate_limited') {
        this.reconnect(retryAfterMs(error));
        return;
      }
    }
    // Every transport failed: most likely the service is unreachable, so wait and start over with the best one.
    this.reconnect();
  }

  /** `transport` opened: it carries the room now, in place of the one it upgrades, if any. */
  private opened(transport: RoomTransport): void {
    this.candidate = undefined;
    this.teardown();
    this.transport = transport;
    this.attempt = 0;
    this.authRetried = false;
    this.setState(transport.state);
    this.curve.refreshOnce(() => this.closed);
    if (transport.state !== 'connected') this.scheduleUpgrade();
  }

  /** `reconnecting`, then a new cycle after the backoff delay (at least `minDelayMs`). */
  private reconnect(minDelayMs = 0): void {
    if (this.closed) return;
    this.teardown();
    this.setState('reconnecting');
    const generation = this.generation;
    void this.curve.current.then((settings) => {
      if (this.closed || generation !== this.generation) return;
      const delay = Math.max(minDelayMs, backoffDelay(this.attempt, settings));
      this.attempt += 1;
      this.retryTimer = setTimeout(() => void this.cycle(), delay);
    });
  }

  /** The open transport failed: fatal errors end the client, the rest reconnect. */
  private lost(transport: RoomTransport, error?: ChatError, minDelayMs = 0): void {
    if (this.closed || transport !== this.transport) return;
    if (!error) {
      this.reconnect(minDelayMs);
      return;
    }
    const verdict = classify(error);
    if (verdict === 'fatal') {
      this.fail(error);
      return;
    }
    this.error = error;
    this.reconnect(Math.max(minDelayMs, verdict === 'rate_limited' ? retryAfterMs(error) : 0));
  }

  /** The service refused the credentials, the membership or the room: no retry. */
  private fail(error: ChatError): void {
    this.error = error;
    this.end(error);
    this.services.events.emit('error', error);
  }

  private end(reason: ChatError): void {
    this.closed = true;
    this.teardown(reason);
    this.setState('disconnected');
  }

  /**
   * While on SSE or polling, try the WebSocket now and then (not before a 429's `Retry-After`); when
   * it opens it takes over.
   */
  private scheduleUpgrade(delayMs = this.services.settings.upgradeIntervalMs): void {
    const { upgradeIntervalMs, transports } = this.services.settings;
    if (upgradeIntervalMs <= 0 || !transports.includes('websocket')) return;
    const generation = this.generation;
    this.upgradeTimer = setTimeout(async () => {
      const socket = new WebSocketTransport(this.host);
      this.candidate = socket;
      const refusal = await socket.open().catch((error: unknown) => toChatError(error));
      if (!refusal || this.closed || generation !== this.generation) return;
      this.scheduleUpgrade(Math.max(upgradeIntervalMs, retryAfterMs(refusal)));
    }, delayMs);
  }

  /**
   * Stops the transports and timers. Sends waiting for an `ack` go over REST with the same
   * clientMessageId (stored once either way), or fail with `reason` when the client is ending.
   */
  private teardown(reason?: ChatError): void {
    this.generation += 1;
    clearTimeout(this.retryTimer);
    clearTimeout(this.upgradeTimer);
    this.transport?.close();
    this.candidate?.close();
    this.transport = this.candidate = undefined;
    if (reason) this.services.sends.rejectAll(reason);
    else this.services.sends.resendAll();
  }

  private setState(next: ConnectionState): void {
    const previous = this.current;
    if (previous === next) return;
    this.current = next;
    this.services.events.emit('state', next, previous);
  }
}
