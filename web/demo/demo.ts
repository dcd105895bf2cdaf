/**
 * The demo page (`/` on the local runtime): pick a name, join or create a public room, chat over the
 * room SDK with presence, typing and the connection state. The token comes from the runtime's
 * local-only `POST /_local/demo/session`, so no API key ever reaches the browser.
 */
import { type ConnectionState, createRoomClient, type Message, type RoomClient } from '../../sdk/index';
import { byId, fill, h } from '../shared/dom';
import { ApiError, requestJson } from '../shared/http';

interface Session {
  readonly userId: string;
  readonly token: string;
}

/** How long a "typing" shows after the last typing event, and how often the page sends one while typing. */
const TYPING_SHOWN_MS = 4000;
const TYPING_RESEND_MS = 2000;

const base = window.location.origin;
let session: Session | undefined;
let room: RoomClient | undefined;
let stopRoom: (() => void) | undefined;

const auth = () => ({ authorization: `Bearer ${session?.token}` });
const message = (error: unknown) => (error instanceof ApiError ? `${error.message} (${error.code})` : String(error));

byId<HTMLFormElement>('name-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const name = byId<HTMLInputElement>('name').value.trim();
  fill(byId('name-error'));
  try {
    session = await requestJson<Session>(`${base}/_local/demo/session`, { body: { name } });
  } catch (error) {
    fill(byId('name-error'), `Could not sign in: ${message(error)}`);
    return;
  }
  fill(byId('me'), session.userId);
  byId('name-step').hidden = true;
  byId('room-step').hidden = false;
  const wanted = new URLSearchParams(window.location.search).get('room');
  if (wanted) byId<HTMLInputElement>('room').value = wanted;
  byId<HTMLInputElement>('room').focus();
  void listPublicRooms();
});

byId<HTMLFormElement>('room-form').addEventListener('submit', (event) => {
  event.preventDefault();
  void joinRoom(byId<HTMLInputElement>('room').value.trim());
});

async function listPublicRooms(): Promise<void> {
  try {
    const { rooms } = await requestJson<{ rooms: { id: string; name: string | null }[] }>(`${base}/rooms?scope=public&limit=50`, {
      headers: auth(),
    });
    fill(
      byId('rooms'),
      ...rooms.map((listed) =>
        h('li', {}, h('button', { type: 'button', class: 'secondary', onclick: () => void joinRoom(listed.id) }, listed.name ?? listed.id)),
      ),
    );
    if (rooms.length === 0) fill(byId('rooms'), h('li', {}, 'None yet: the first one you join is created.'));
  } catch (error) {
    fill(byId('rooms'), h('li', {}, `Could not list rooms: ${message(error)}`));
  }
}

/** Joins the room, creating it as a public room when it does not exist (someone else creating it first is as good). */
async function joinRoom(roomId: string): Promise<void> {
  fill(byId('room-error'));
  try {
    await requestJson(`${base}/rooms/${encodeURIComponent(roomId)}`, { headers: auth() });
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 404))
      return fill(byId('room-error'), `Could not open ${roomId}: ${message(error)}`);
    try {
      await requestJson(`${base}/rooms`, { headers: auth(), body: { id: roomId, type: 'public', name: roomId } });
    } catch (creating) {
      if (!(creating instanceof ApiError && creating.code === 'room_exists'))
        return fill(byId('room-error'), `Could not create ${roomId}: ${message(creating)}`);
    }
  }
  openChat(roomId);
}

function openChat(roomId: string): void {
  const token = session?.token as string;
  room = createRoomClient({ baseUrl: base, roomId, token, history: 50 });
  fill(byId('chat-title'), `Room ${roomId}`);
  fill(byId('messages'));
  byId<HTMLAnchorElement>('second-tab').href = `/?room=${encodeURIComponent(roomId)}`;
  byId('room-step').hidden = true;
  byId('chat').hidden = false;
  showState(room.state);
  showOnline(room.members);
  const typing = typingIndicator();
  const subscriptions = [
    room.on('state', showState),
    room.on('message', (received) => {
      typing.stopped(received.userId);
      showMessage(received);
    }),
    room.on('presence', ({ members }) => showOnline(members)),
    room.on('member_joined', () => showOnline(room?.members ?? [])),
    room.on('member_left', ({ userId }) => {
      typing.stopped(userId);
      showOnline(room?.members ?? []);
    }),
    room.on('event', ({ event, data, userId }) => {
      if (event !== 'client-typing' || !userId) return;
      if (data.typing === false) typing.stopped(userId);
      else typing.started(userId);
    }),
  ];
  stopRoom = () => {
    for (const unsubscribe of subscriptions) unsubscribe();
    typing.clear();
  };
  byId<HTMLInputElement>('message').focus();
}

let lastTypingSent = 0;
byId<HTMLInputElement>('message').addEventListener('input', () => {
  if (room?.state !== 'connected' || Date.now() - lastTypingSent < TYPING_RESEND_MS) return;
  lastTypingSent = Date.now();
  room.trigger('client-typing', { typing: true });
});

byId<HTMLFormElement>('send-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = byId<HTMLInputElement>('message');
  const content = input.value.trim();
  if (!room || !content) return;
  fill(byId('send-error'));
  input.value = '';
  if (room.state === 'connected' && lastTypingSent > 0) room.trigger('client-typing', { typing: false });
  lastTypingSent = 0;
  try {
    await room.send(content);
  } catch (error) {
    input.value = content;
    fill(byId('send-error'), `Not sent: ${message(error)}`);
  }
});

byId('leave').addEventListener('click', () => {
  stopRoom?.();
  room?.close();
  room = undefined;
  byId('chat').hidden = true;
  byId('room-step').hidden = false;
  byId<HTMLInputElement>('room').focus();
  void listPublicRooms();
});

const stateLabels: Record<ConnectionState, string> = {
  connecting: 'connecting',
  connected: 'connected (WebSocket)',
  sse: 'connected (SSE, no presence or typing)',
  polling: 'connected (polling, no presence or typing)',
  reconnecting: 'reconnecting',
  disconnected: 'disconnected',
};

function showState(state: ConnectionState): void {
  const badge = byId('state');
  badge.dataset.state = state;
  fill(badge, stateLabels[state]);
  if (state === 'disconnected' && room?.lastError) fill(byId('send-error'), `Disconnected: ${room.lastError.message}`);
}

function showOnline(members: readonly string[]): void {
  fill(byId('online'), ...[...members].sort().map((member) => h('li', {}, member === session?.userId ? `${member} (you)` : member)));
}

function showMessage(received: Message): void {
  const list = byId('messages');
  const time = new Date(received.createdAt);
  list.append(
    h(
      'li',
      { 'data-message-id': received.id },
      h('span', { class: 'author' }, received.userId),
      h('span', { class: 'content' }, received.content),
      h('time', { datetime: received.createdAt }, time.toLocaleTimeString()),
    ),
  );
  list.scrollTop = list.scrollHeight;
}

/** Who is typing, each shown until they send, stop, leave or stay quiet for `TYPING_SHOWN_MS`. */
function typingIndicator() {
  const timers = new Map<string, ReturnType<typeof setTimeout>>();
  const render = () => {
    const names = [...timers.keys()].sort();
    fill(byId('typing'), names.length === 0 ? '' : `${names.join(', ')} ${names.length === 1 ? 'is' : 'are'} typing…`);
  };
  const stopped = (userId: string) => {
    clearTimeout(timers.get(userId));
    if (timers.delete(userId)) render();
  };
  return {
    started(userId: string) {
      clearTimeout(timers.get(userId));
      timers.set(
        userId,
        setTimeout(() => stopped(userId), TYPING_SHOWN_MS),
      );
      render();
    },
    stopped,
    clear() {
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
      render();
    },
  };
}
