import type { ChatError } from './errors.js';
import type { MessageInput } from './rest.js';
import type { Message } from './types.js';

interface PendingSend {
  readonly input: MessageInput;
  readonly resolve: (message: Message) => void;
  readonly reject: (error: unknown) => void;
  readonly timer: ReturnType<typeof setTimeout>;
}

/**
 * Sends made over the WebSocket, waiting for their `ack`. Whatever keeps the `ack` from coming (a
 * timeout, a dropped socket, an `ack` without the message) sends the same input over REST: the
 * `clientMessageId` makes the service store it once either way.
 */
export class PendingSends {
  private readonly waiting = new Map<string, PendingSend>();

  /**
   * @param overRest stores a message over REST (and delivers it)
   * @param ackTimeoutMs how long a send waits for its `ack`
   */
  constructor(
    private readonly overRest: (input: MessageInput) => Promise<Message>,
    private readonly ackTimeoutMs: number,
  ) {}

  /** Whether a send with this `clientMessageId` is waiting (a second one goes over REST rather than share its `ack`). */
  has(clientMessageId: string): boolean {
    return this.waiting.has(clientMessageId);
  }

  /** Sends `input` with `transmit` (the socket) and resolves with the stored message its `ack` brings. */
  send(input: MessageInput, transmit: (frame: Record<string, unknown>) => void): Promise<Message> {
    return new Promise<Message>((resolve, reject) => {
      // The server answers a frame it cannot parse without the clientMessageId; REST then gives the real answer.
      const timer = setTimeout(() => this.resend(input.clientMessageId), this.ackTimeoutMs);
      this.waiting.set(input.clientMessageId, { input, resolve, reject, timer });
      try {
        transmit({ type: 'message', ...input });
      } catch {
        this.resend(input.clientMessageId);
      }
    });
  }

  /** An `ack` frame: resolves its send with the stored message, or retries over REST when the frame carried none. */
  acknowledged(clientMessageId: unknown, message: Message | undefined): void {
    if (message) this.take(clientMessageId)?.resolve(message);
    else this.resend(clientMessageId);
  }

  /** An `error` frame: rejects the send it answers; false when it answers none. */
  refused(clientMessageId: unknown, error: ChatError): boolean {
    const pending = this.take(clientMessageId);
    pending?.reject(error);
    return pending !== undefined;
  }

  /** The socket is gone: every waiting send goes over REST. */
  resendAll(): void {
    for (const clientMessageId of [...this.waiting.keys()]) this.resend(clientMessageId);
  }

  /** The client ended: every waiting send fails with `reason`. */
  rejectAll(reason: ChatError): void {
    for (const clientMessageId of [...this.waiting.keys()]) this.take(clientMessageId)?.reject(reason);
  }

  private resend(clientMessageId: unknown): void {
    const pending = this.take(clientMessageId);
    if (pending) this.overRest(pending.input).then(pending.resolve, pending.reject);
  }

  private take(clientMessageId: unknown): PendingSend | undefined {
    if (typeof clientMessageId !== 'string') return undefined;
    const pending = this.waiting.get(clientMessageId);
    if (pending) {
      this.waiting.delete(clientMessageId);
      clearTimeout(pending.timer);
    }
    return pending;
  }
}
