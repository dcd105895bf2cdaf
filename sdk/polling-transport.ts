import { type ChatError, classify, retryAfterMs, toChatError } from './errors.js';
import { type RoomTransport, superseded, type TransportHost } from './transport.js';

/** The room by `GET /rooms/{roomId}/messages?after=` every `pollIntervalMs`: the transport that works through anything that lets REST through. */
export class PollingTransport implements RoomTransport {
  readonly state = 'polling';
  private closed = false;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(private readonly host: TransportHost) {}

  /** Open once the first poll is answered. */
  async open(): Promise<ChatError | undefined> {
    await this.host.log.startIfNew();
    if (this.closed) return superseded();
    try {
      await this.poll();
    } catch (error) {
      return toChatError(error);
    }
    if (this.closed) return superseded();
    this.host.opened(this);
    this.schedule(this.host.settings.pollIntervalMs);
    return undefined;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private schedule(delayMs: number): void {
    const { pollIntervalMs } = this.host.settings;
    this.timer = setTimeout(async () => {
      try {
        await this.poll();
        if (!this.closed) this.schedule(pollIntervalMs);
      } catch (error) {
        if (this.closed) return;
        const chatError = toChatError(error);
        // A 429 slows the polling down; it is no reason to give the transport up.
        if (classify(chatError) === 'rate_limited') this.schedule(Math.max(pollIntervalMs, retryAfterMs(chatError)));
        else this.host.lost(this, chatError);
      }
    }, delayMs);
  }

  private async poll(): Promise<void> {
    const messages = await this.host.log.catchUp(() => !this.closed);
    if (!this.closed) this.host.log.deliver(messages);
  }
}
