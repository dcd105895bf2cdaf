import { describe, expect, it } from 'vitest';
import { api, createTestProject, uniqueId } from '../support/api';

describe('smoke', () => {
  it('mints a token, creates a room, posts and reads back a message', async () => {
    // Prepare
    const project = await createTestProject();
    const alice = await project.token('alice');
    const roomId = uniqueId('room');
    expect((await api('/rooms', { token: alice, body: { id: roomId, type: 'group', members: ['bob'] } })).status).toBe(201);

    // Act
    const posted = await api('/messages', { token: alice, body: { roomId, content: 'hello' } });
    const history = await api(`/rooms/${roomId}/messages`, { token: alice });

    // Assess
    expect(posted.status).toBe(201);
    expect(history.body.messages).toEqual([posted.body]);
  });
});
