import { SeenIds } from './message-ids.js';
import type { RoomRest } from './rest.js';
import type { Message } from './types.js';

/** A resume pages through at most this many pages (100,000 messages) before going live. */
const MAX_CATCH_UP_PAGES = 1000;

/**
 * The room's timeline as this client delivers it: every message once, in id order, whichever
 * transport or REST call brought it. It knows where the timeline starts (the first connection's
 * window) and reads what a (re)connection missed.
 */
export class MessageLog {
  private readonly seen = new SeenIds();
  /**
   * Replays (history, catch-up pages, SSE, polling) never deliver ids below this: the start of the
   * window the first connection delivered. Live WebSocket frames are exempt (a backdated import is
   * broadcast live with an old id), but not from the forget horizon of `seen`.
   */
  private floor: number | undefined;
  /** Live messages held back while a WebSocket's replay is fetched, so none overtakes it. */
  private held: Message[] | undefined;

  /**
   * @param history how many messages the first connection delivers (0–100)
   * @param onMessage called once per message, in id order within each batch
   */
  constructor(
    private readonly rest: RoomRest,
    private readonly history: number,
    private readonly onMessage: (message: Message) => void,
  ) {}

  /** The newest id delivered, or where an empty window started. */
  get lastSeenId(): number | undefined {
    return this.seen.lastSeenId;
  }

  /** Where a (re)connection resumes: a little before `lastSeenId` (see `RESUME_OVERLAP`); `undefined` before the timeline started. */
  resumeAfter(): number | undefined {
    return this.seen.resumeAfter();
  }

  /** The first connection has fixed where the timeline starts; later ones resume from `lastSeenId`. */
  get started(): boolean {
    return this.seen.lastSeenId !== undefined;
  }

  /**
   * The `history` a new WebSocket asks for: the client's `history` on the first connection, 0 once
   * the timeline has started (the catch-up from the last id seen covers the gap; a `history` frame
   * would only bring old messages again).
   */
  historyToAsk(): number {
    return this.started ? 0 : this.history;
  }

  /** Delivers the messages not delivered before, in id order; `replayed` ones below the floor are dropped. */
  deliver(replayed: readonly Message[], live: readonly Message[] = []): void {
    const floor = this.floor;
    const candidates = floor === undefined ? [...replayed, ...live] : [...replayed.filter((message) => message.id >= floor), ...live];
    for (const message of this.seen.accept(candidates)) this.onMessage(message);
  }

  /** A message that just happened (a frame, an `ack`, a `201`): delivered now, or after the replay being fetched. */
  live(message: Message): void {
    if (this.held) this.held.push(message);
    else this.deliver([], [message]);
  }

  /** A WebSocket opened and fetches its replay: live messages wait for it. */
  hold(): void {
    this.held = [];
  }

  /** The replay is in: delivered together with the live messages that waited for it. */
  release(replayed: readonly Message[]): void {
    const live = this.held ?? [];
    this.held = undefined;
    this.deliver(replayed, live);
  }

  /** The WebSocket went away before its replay: what it held comes again in the next catch-up. */
  dropHeld(): void {
    this.held = undefined;
  }

  /** Starts the timeline with the window of the first connection (its `history` frame or REST page). */
  startWindow(messages: readonly Message[]): void {
    const ids = messages.map((message) => message.id);
    this.floor = ids.length ? Math.min(...ids) : 0;
    this.seen.startAt(ids.length ? Math.max(...ids) : 0);
  }

  /**
   * Starts the timeline over REST: the newest `history` messages, returned for delivery. With
   * `history` 0 nothing is delivered; the timeline starts after the room's newest message.
   */
  async loadWindow(): Promise<Message[]> {
    const messages = await this.rest.latestMessages(Math.max(1, this.history));
    if (this.history === 0) {
      const newest = messages.at(-1)?.id ?? 0;
      this.floor = newest + 1;
      this.seen.startAt(newest);
      return [];
    }
    this.startWindow(messages);
    return messages;
  }

  /** For transports without a `history` frame: on the first connection, delivers the window read over REST. */
  async startIfNew(): Promise<void> {
    if (!this.started) this.deliver(await this.loadWindow());
  }

  /** Every message after `lastSeenId - overlap`, paged until `hasMore` is false (or `wanted` turns false). */
  async catchUp(wanted: () => boolean): Promise<Message[]> {
    const messages: Message[] = [];
    let after = this.resumeAfter() ?? 0;
    for (let page = 0; page < MAX_CATCH_UP_PAGES && wanted(); page += 1) {
      const { messages: batch, hasMore } = await this.rest.messagesAfter(after);
      messages.push(...batch);
      const last = batch.at(-1);
      if (!hasMore || !last) break;
      after = last.id;
    }
    return messages;
  }
}
