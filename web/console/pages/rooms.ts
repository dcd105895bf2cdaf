/** Rooms: the public directory (and an admin's own rooms), any room by id, its members and roles, its live messages. */
import { fill, h } from '../../shared/dom';
import { requestJson } from '../../shared/http';
import { errorText, type PageContext } from '../page';

interface Room {
  readonly id: string;
  readonly type: string;
  readonly name: string | null;
}

interface Member {
  readonly userId: string;
  readonly role: string;
  readonly joinedAt: string;
}

interface Message {
  readonly id: number;
  readonly userId: string;
  readonly content: string;
  readonly createdAt: string;
  readonly moderation: { readonly label: string } | null;
}

/** How often an open room's messages are fetched again: the console polls, it holds no socket of its own. */
const POLL_MS = 3000;

export async function roomsPage(context: PageContext): Promise<void> {
  const { root } = context;
  const directory = h('ul');
  const detail = h('div');
  const roomId = h('input', { id: 'open-room-id', required: true, size: 24 });
  let leaveRoom: (() => void) | undefined;
  context.onLeave(() => leaveRoom?.());
  const open = (id: string) => {
    leaveRoom?.();
    leaveRoom = showRoom(context, id, detail);
  };
  fill(
    root,
    h(
      'div',
      { class: 'columns' },
      h(
        'section',
        { 'aria-labelledby': 'rooms-title' },
        h('h2', { id: 'rooms-title' }, 'Rooms'),
        h(
          'form',
          {
            onsubmit: (event: SubmitEvent) => {
              event.preventDefault();
              open(roomId.value.trim());
            },
          },
          h('label', { for: 'open-room-id' }, 'Room id'),
          roomId,
          h('p', {}, h('button', { type: 'submit' }, 'Open')),
        ),
        h('h3', { id: 'directory-title' }, 'Public and your rooms'),
        directory,
      ),
      h('section', { 'aria-label': 'Room' }, detail),
    ),
  );
  fill(detail, h('p', {}, 'Choose a room.'));
  try {
    // GET /rooms answers user tokens only: an API key lists through a token it mints (client.ts).
    const headers = { authorization: `Bearer ${await context.userToken()}` };
    const lists = await Promise.all(
      ['public', 'mine'].map((scope) =>
        requestJson<{ rooms: Room[] }>(`${context.baseUrl}/rooms?scope=${scope}&limit=100`, { headers }).then((answer) => answer.rooms),
      ),
    );
    const rooms = [...new Map(lists.flat().map((room) => [room.id, room])).values()];
    if (rooms.length === 0) return fill(directory, h('li', {}, 'No rooms listed.'));
    fill(
      directory,
      ...rooms.map((room) =>
        h('li', {}, h('button', { type: 'button', class: 'link', onclick: () => open(room.id) }, room.name ?? room.id), ` (${room.type})`),
      ),
    );
  } catch (error) {
    fill(directory, h('li', { class: 'error' }, `Could not list rooms: ${errorText(error)}`));
  }
}

/** Draws one room and polls its messages until the returned stop is called. */
function showRoom({ call }: PageContext, roomId: string, into: HTMLElement): () => void {
  const path = `/rooms/${encodeURIComponent(roomId)}`;
  const members = h('div');
  const messages = h('ol', { class: 'messages', 'aria-label': `Messages in ${roomId}`, 'aria-live': 'polite', tabindex: 0 });
  const outcome = h('p', { role: 'status' });
  const userId = h('input', { id: 'member-user-id', required: true, size: 20 });
  const role = h('select', { id: 'member-role' }, h('option', { value: 'member' }, 'member'), h('option', { value: 'guest' }, 'guest'));
  let lastId: number | undefined;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;

  fill(
    into,
    h('h2', {}, `Room ${roomId}`),
    h('h3', { id: 'members-title' }, 'Members'),
    members,
    h(
      'form',
      {
        class: 'row',
        onsubmit: async (event: SubmitEvent) => {
          event.preventDefault();
          try {
            await call(`${path}/members`, { body: { userId: userId.value.trim(), role: role.value } });
            fill(outcome, `${userId.value} is a ${role.value}.`);
            userId.value = '';
            await loadMembers();
          } catch (error) {
            fill(outcome, h('span', { class: 'error' }, `Not changed: ${errorText(error)}`));
          }
        },
      },
      h('div', {}, h('label', { for: 'member-user-id' }, 'User id'), userId),
      h('div', {}, h('label', { for: 'member-role' }, 'Role'), role),
      h('button', { type: 'submit' }, 'Add or change'),
    ),
    outcome,
    h('h3', {}, 'Live messages'),
    messages,
  );

  async function loadMembers(): Promise<void> {
    try {
      const listed = (await call<{ members: Member[] }>(`${path}/members?limit=500`)).members;
      fill(
        members,
        h(
          'table',
          { 'aria-labelledby': 'members-title' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...['User', 'Role', 'Joined'].map((label) => h('th', { scope: 'col' }, label)),
              h('th', { scope: 'col' }, h('span', { class: 'muted' }, 'Actions')),
            ),
          ),
          h(
            'tbody',
            {},
            ...listed.map((member) =>
              h(
                'tr',
                {},
                h('td', {}, member.userId),
                h('td', {}, member.role),
                h('td', {}, new Date(member.joinedAt).toLocaleString()),
                h(
                  'td',
                  {},
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'danger',
                      'aria-label': `Remove ${member.userId} from ${roomId}`,
                      onclick: async () => {
                        try {
                          await call(`${path}/members/${encodeURIComponent(member.userId)}`, { method: 'DELETE' });
                          await loadMembers();
                        } catch (error) {
                          fill(outcome, h('span', { class: 'error' }, `Not removed: ${errorText(error)}`));
                        }
                      },
                    },
                    'Remove',
                  ),
                ),
              ),
            ),
          ),
        ),
      );
    } catch (error) {
      fill(members, h('p', { class: 'error' }, `Could not list members: ${errorText(error)}`));
    }
  }

  async function poll(): Promise<void> {
    try {
      const query = lastId === undefined ? 'limit=50' : `after=${lastId}&limit=100`;
      const page = await call<{ messages: Message[] }>(`${path}/messages?${query}`);
      for (const message of page.messages) {
        if (lastId !== undefined && message.id <= lastId) continue;
        lastId = message.id;
        messages.append(
          h(
            'li',
            {},
            h('span', { class: 'author' }, message.userId),
            message.content,
            message.moderation ? h('span', { class: 'error' }, ` [${message.moderation.label}]`) : null,
            h('span', { class: 'muted' }, ` ${new Date(message.createdAt).toLocaleTimeString()}`),
          ),
        );
      }
      if (page.messages.length > 0) messages.scrollTop = messages.scrollHeight;
    } catch (error) {
      fill(outcome, h('span', { class: 'error' }, `Could not read messages: ${errorText(error)}`));
    }
    if (!stopped) timer = setTimeout(() => void poll(), POLL_MS);
  }

  void loadMembers();
  void poll();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
