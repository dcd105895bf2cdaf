import type { ConnectionState, Message, RoomClient } from '../../sdk/index';
import { createRoomClient } from '../../sdk/index';
import { type GuestSession, startGuestSession } from './guest-session';
import type { WidgetSettings } from './settings';
import type { WidgetView } from './view';

const STATE_WORDS: Record<ConnectionState, string> = {
  connecting: 'Connecting…',
  connected: 'Connected',
  sse: 'Connected (streaming)',
  polling: 'Connected (polling)',
  reconnecting: 'Reconnecting…',
  disconnected: 'Offline',
};

/** A guest token this close to its expiry is replaced before the next connection attempt. */
const TOKEN_RENEW_MARGIN_MS = 60_000;
/** Typing indicators last this long unless renewed (the agent renews its own every 3 s). */
const TYPING_SHOWN_MS = 6000;
/** The visitor's `client-typing` is sent at most this often while they type... */
const TYPING_SEND_EVERY_MS = 3000;
/** ...and `typing: false` this long after their last key. */
const TYPING_IDLE_MS = 4000;

/**
 * One visitor's conversation: the guest session (started when the panel first opens), the room
 * client of the SDK (WebSocket, then SSE, then polling, with the flags' reconnect curve), and what
 * it reports shown in the view.
 */
export class WidgetChat {
  private session: GuestSession | undefined;
  /** Every guest user this visitor has been: a renewed session is a new guest, and their messages are all "You". */
  private readonly ownUserIds = new Set<string>();
  private room: RoomClient | undefined;
  private starting: Promise<void> | undefined;
  private lastTypingSentAt = 0;
  private idleTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly typers = new Map<string, { label: string; timer: ReturnType<typeof setTimeout> }>();

  constructor(
    private readonly settings: WidgetSettings,
    private readonly view: WidgetView,
  ) {}

  /** Starts the guest session and the room client once; a refused session takes the widget off the page. */
  start(): Promise<void> {
    this.starting ??= this.connect();
    return this.starting;
  }

  private async connect(): Promise<void> {
    const { view, settings } = this;
    view.showState('connecting', STATE_WORDS.connecting);
    const session = await startGuestSession(settings);
    if (!session) {
      view.remove();
      return;
    }
    this.session = session;
    this.ownUserIds.add(session.userId);
    const room = createRoomClient({
      baseUrl: settings.baseUrl,
      roomId: session.roomId,
      // Asked before every connection attempt: a lapsing guest token is replaced by a new session.
      getToken: () => this.currentToken(),
      ...(settings.wsUrl ? { wsUrl: settings.wsUrl } : {}),
      ...(settings.sseUrl ? { sseUrl: settings.sseUrl } : {}),
    });
    this.room = room;
    room.on('state', (state) => {
      view.showState(state, STATE_WORDS[state]);
      view.showPresence(state === 'connected' ? room.members.length : undefined);
    });
    room.on('presence', ({ members }) => view.showPresence(members.length));
    room.on('member_joined', () => view.showPresence(room.members.length));
    room.on('member_left', () => view.showPresence(room.members.length));
    room.on('message', (message) => this.showMessage(message));
    room.on('event', ({ event, userId, data }) => {
      if (event !== 'client-typing' || !userId || this.ownUserIds.has(userId)) return;
      this.typingChanged(userId, 'Someone', data.typing !== false);
    });
    room.on('agent_typing', ({ userId, typing }) => this.typingChanged(userId, 'The assistant', typing));
    room.on('handoff', ({ state }) =>
      view.showBanner(state === 'human_active' ? 'A person from our team has joined the conversation.' : undefined),
    );
    view.showState(room.state, STATE_WORDS[room.state]);
  }

  /** The session's token, or a new session's when it is about to lapse; a refused renewal takes the widget off the page. */
  private async currentToken(): Promise<string> {
    const session = this.session as GuestSession;
    const expiresAt = Date.parse(session.expiresAt);
    if (Number.isNaN(expiresAt) || expiresAt - Date.now() > TOKEN_RENEW_MARGIN_MS) return session.token;
    const renewed = await startGuestSession(this.settings);
    if (!renewed) {
      this.room?.close();
      this.view.remove();
      throw new Error('The guest session was not renewed');
    }
    this.session = renewed;
    this.ownUserIds.add(renewed.userId);
    return renewed.token;
  }

  private showMessage(message: Message): void {
    const own = this.ownUserIds.has(message.userId);
    // A message ends its author's typing at once, not when the indicator would lapse.
    if (this.typers.has(message.userId)) this.typingChanged(message.userId, '', false);
    this.view.showMessage({ id: message.id, own, author: own ? 'You' : authorOf(message.userId), content: message.content });
  }

  async send(text: string): Promise<void> {
    await this.start();
    const room = this.room;
    if (!room) return;
    this.stopTyping();
    try {
      await room.send(text);
    } catch (error) {
      this.view.showTyping(`Not sent: ${(error as Error).message}`);
    }
  }

  /** The visitor typed: `client-typing` (WebSocket only; on SSE and polling nobody would receive it). */
  typed(): void {
    const room = this.room;
    if (room?.state !== 'connected') return;
    const now = Date.now();
    if (now - this.lastTypingSentAt >= TYPING_SEND_EVERY_MS) {
      this.lastTypingSentAt = now;
      room.trigger('client-typing', { typing: true });
    }
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.stopTyping(), TYPING_IDLE_MS);
  }

  private stopTyping(): void {
    clearTimeout(this.idleTimer);
    if (!this.lastTypingSentAt) return;
    this.lastTypingSentAt = 0;
    if (this.room?.state === 'connected') this.room.trigger('client-typing', { typing: false });
  }

  private typingChanged(userId: string, label: string, typing: boolean): void {
    const current = this.typers.get(userId);
    if (current) clearTimeout(current.timer);
    if (typing) {
      this.typers.set(userId, { label, timer: setTimeout(() => this.typingChanged(userId, label, false), TYPING_SHOWN_MS) });
    } else {
      this.typers.delete(userId);
    }
    const labels = [...new Set([...this.typers.values()].map((typer) => typer.label))];
    this.view.showTyping(labels.length ? `${labels.join(' and ')} ${labels.length > 1 ? 'are' : 'is'} typing…` : undefined);
  }
}

/** Agents write as `agent:<handle>`; everyone else on the site's side is its support team. */
function authorOf(userId: string): string {
  return userId.startsWith('agent:') ? 'Assistant' : 'Support';
}
