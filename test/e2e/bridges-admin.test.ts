import { describe, expect, it } from 'vitest';
import { api, createTestProject, newGroupRoom, uniqueId } from '../support/api';
import { bridgeBodies, createSlackBridge } from '../support/bridges';
import { collectEvents, eventsOf, openEventTap } from '../support/events';
import { get } from '../support/raw-table';

/**
 * The bridge records (`/admin/bridges`): what an admin sends, what is answered and what is stored.
 * Secrets are never answered (sealed at rest under `webhook-key`: test/e2e/webhooks-secrets.test.ts,
 * which runs with the key); the room counts its bridges, which marks its messages for the relay.
 */

describe('POST /admin/bridges and the reads', () => {
  it('answers the bridge with its settings and the names of its secrets, never their values, on every read', async () => {
    // Prepare
    const project = await createTestProject('bridges-admin');
    const room = await newGroupRoom(project);
    const body = bridgeBodies.slack(room.roomId);

    // Act
    const created = await api('/admin/bridges', { apiKey: project.apiKey, body });
    const read = await api(`/admin/bridges/${created.body.id}`, { apiKey: project.apiKey });
    const listed = await api('/admin/bridges', { apiKey: project.apiKey });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(new RegExp(`^br_${project.projectId}_[0-9a-f]{24}$`)),
      platform: 'slack',
      roomId: room.roomId,
      settings: { channelId: body.channelId },
      secrets: ['botToken', 'signingSecret'],
      inboundPath: `/webhooks/bridge/slack/${created.body.id}`,
    });
    expect(read.body).toEqual(created.body);
    expect(listed.body.bridges).toEqual([created.body]);
    for (const answer of [created, read, listed]) {
      expect(JSON.stringify(answer.body)).not.toContain(body.signingSecret);
      expect(JSON.stringify(answer.body)).not.toContain(body.botToken);
    }
  });

  it('takes a Discord webhook URL apart: the id is a setting, the token a sealed secret', async () => {
    // Prepare
    const project = await createTestProject('bridges-discord');
    const room = await newGroupRoom(project);
    const body = bridgeBodies.discord(room.roomId);

    // Act
    const created = await api('/admin/bridges', { apiKey: project.apiKey, body });

    // Assess
    expect(created.body.settings).toEqual({ publicKey: body.publicKey, webhookId: '112233445566778899' });
    expect(created.body.secrets).toEqual(['webhookToken']);
    expect(JSON.stringify(created.body)).not.toContain(body.webhookUrl.split('/').at(-1));
  });

  it('answers 404 room_not_found for a room the project does not have, and stores nothing', async () => {
    // Prepare
    const project = await createTestProject('bridges-no-room');

    // Act
    const response = await api('/admin/bridges', { apiKey: project.apiKey, body: bridgeBodies.slack(uniqueId('missing')) });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 404, code: 'room_not_found' });
    expect((await api('/admin/bridges', { apiKey: project.apiKey })).body.bridges).toEqual([]);
  });

  it('holds a project to 50 bridges (400 too_many_bridges)', async () => {
    // Prepare
    const project = await createTestProject('bridges-cap');
    const room = await newGroupRoom(project);
    for (let index = 0; index < 50; index += 10) {
      await Promise.all(Array.from({ length: 10 }, () => createSlackBridge(project.apiKey, room.roomId)));
    }

    // Act
    const over = await api('/admin/bridges', { apiKey: project.apiKey, body: bridgeBodies.slack(room.roomId) });

    // Assess
    expect({ status: over.status, code: over.body?.error?.code }).toEqual({ status: 400, code: 'too_many_bridges' });
    expect((await api('/admin/bridges', { apiKey: project.apiKey })).body.bridges).toHaveLength(50);
  });
});

describe('PATCH and DELETE /admin/bridges/{bridgeId}', () => {
  it('changes settings and replaces a secret, keeping the platform, the room and the other secret', async () => {
    // Prepare
    const project = await createTestProject('bridges-patch');
    const room = await newGroupRoom(project);
    const bridge = await createSlackBridge(project.apiKey, room.roomId);
    const before = await get(`P#${project.projectId}#BRIDGES`, `B#${bridge.id}`);

    // Act
    const changed = await api(`/admin/bridges/${bridge.id}`, {
      apiKey: project.apiKey,
      method: 'PATCH',
      body: { channelId: 'C0NEWCHAN', botToken: 'xoxb-replaced-token' },
    });
    const after = await get(`P#${project.projectId}#BRIDGES`, `B#${bridge.id}`);

    // Assess
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({
      platform: 'slack',
      roomId: room.roomId,
      settings: { channelId: 'C0NEWCHAN' },
      secrets: ['botToken', 'signingSecret'],
    });
    expect(after?.secrets.signingSecret).toEqual(before?.secrets.signingSecret);
    expect(after?.secrets.botToken).not.toEqual(before?.secrets.botToken);
    expect(JSON.stringify(changed.body)).not.toContain('xoxb-replaced-token');
  });

  it('removes the bridge: reads answer 404 bridge_not_found, a second delete too, and the room counts none', async () => {
    // Prepare
    const project = await createTestProject('bridges-delete');
    const room = await newGroupRoom(project);
    const bridge = await createSlackBridge(project.apiKey, room.roomId);
    const counted = await get(`P#${project.projectId}#R#${room.roomId}`, 'ROOM');

    // Act
    const removed = await api(`/admin/bridges/${bridge.id}`, { apiKey: project.apiKey, method: 'DELETE' });
    const again = await api(`/admin/bridges/${bridge.id}`, { apiKey: project.apiKey, method: 'DELETE' });
    const read = await api(`/admin/bridges/${bridge.id}`, { apiKey: project.apiKey });

    // Assess
    expect(counted?.bridgeCount).toBe(1);
    expect(removed.status).toBe(204);
    expect({ status: again.status, code: again.body?.error?.code }).toEqual({ status: 404, code: 'bridge_not_found' });
    expect({ status: read.status, code: read.body?.error?.code }).toEqual({ status: 404, code: 'bridge_not_found' });
    expect((await get(`P#${project.projectId}#R#${room.roomId}`, 'ROOM'))?.bridgeCount).toBe(0);
  });
});

describe('messages of a bridged room', () => {
  it('are announced with bridged: true, where messages of a room without a bridge are not', async () => {
    // Prepare
    const project = await createTestProject('bridges-marked');
    await openEventTap(project.projectId);
    const [bridged, plain] = await Promise.all([newGroupRoom(project), newGroupRoom(project)]);
    await createSlackBridge(project.apiKey, bridged.roomId);

    // Act
    await api('/messages', { token: bridged.owner.token, body: { roomId: bridged.roomId, content: 'to the bridge' } });
    await api('/messages', { token: plain.owner.token, body: { roomId: plain.roomId, content: 'stays here' } });
    const events = await collectEvents(eventsOf(project.projectId, 'message.created'), { count: 2 });

    // Assess
    const byRoom = Object.fromEntries(events.map((event) => [event.payload.roomId, event.payload]));
    expect(byRoom[bridged.roomId]).toMatchObject({ content: 'to the bridge', bridged: true });
    expect(byRoom[plain.roomId]).not.toHaveProperty('bridged');
  });
});

describe('ids kept for bridged platforms', () => {
  it.each(['slack:T1:U1', 'discord:1:2', 'matrix:@alice:example.org'])('refuses a token naming the bridged user %s', async (userId) => {
    // Prepare
    const project = await createTestProject('bridges-reserved');

    // Act
    const answer = await api('/auth/token', { apiKey: project.apiKey, body: { userId } });

    // Assess
    expect(answer.status).toBe(400);
    expect(answer.body.error.code).toBe('reserved_id');
  });

  it('refuses a clientMessageId in the bridge: prefix', async () => {
    // Prepare
    const project = await createTestProject('bridges-reserved-cmid');
    const room = await newGroupRoom(project);

    // Act
    const answer = await api('/messages', {
      token: room.owner.token,
      body: { roomId: room.roomId, content: 'x', clientMessageId: 'bridge:abc' },
    });

    // Assess
    expect({ status: answer.status, code: answer.body?.error?.code }).toEqual({ status: 400, code: 'reserved_id' });
  });
});
