import { createHmac } from 'node:crypto';
import { expect } from 'vitest';
import { api, runtime, uniqueId } from '../../support/api';
import { describeTenantMatrix, expectAllNotFound, tenantsBeforeAll } from '../../support/matrices/tenant-driver';

/**
 * Project A against project B on the Privacy area's routes: A's admin, whose user id B has too,
 * exports and erases that id within A only; a download link of A's never opens anything of B's,
 * altered or signed with A's secret. The matrix is `tenant-driver.ts`.
 */

const tenants = tenantsBeforeAll();

/** A link token as the service signs one, here with the secret of the project the caller knows. */
const linkToken = (secret: string, fields: unknown[]) => {
  const payload = Buffer.from(JSON.stringify(fields)).toString('base64url');
  return `${payload}.${createHmac('sha256', secret).update(`gdpr-export\u0000${payload}`).digest('base64url')}`;
};

describeTenantMatrix('Privacy', tenants, {
  async ExportSubjectData({ aAdmin, aRoomId, bRooms, bMessage, sharedUserId }) {
    // Act
    const exported = await api('/gdpr/export', { token: aAdmin });

    // Assess
    expect(exported.status).toBe(200);
    expect(exported.body.subject.userId).toBe(sharedUserId);
    expect(exported.body.memberships.map((membership: any) => membership.roomId)).toEqual([aRoomId]);
    const text = JSON.stringify(exported.body);
    for (const roomId of bRooms()) expect(text).not.toContain(roomId);
    expect(text).not.toContain(bMessage.content);
    expect(exported.body.messages).toEqual([]);
  },

  async DownloadSubjectExport({ a, b }) {
    // Prepare: a staged export of A's, and B's project named in a link
    const userId = uniqueId('big');
    const token = await a.token(userId);
    const roomId = uniqueId('room');
    await api('/rooms', { token, body: { id: roomId, type: 'group' } });
    for (let index = 0; index < 24; index++) await api('/messages', { token, body: { roomId, content: `${index} ${'x'.repeat(1500)}` } });
    const staged = await api('/gdpr/export', { token });
    const link = new URL(staged.body.parts[0], runtime().baseUrl);
    const [payload] = (link.searchParams.get('token') ?? '').split('.');
    const [, ref, exportId, expires] = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString());
    const expiresLater = Math.floor(Date.now() / 1000) + 600;

    // Act
    const own = await api(`${link.pathname}${link.search}`);
    const renamed = await api(`/gdpr/export/download?token=${linkToken('not-the-secret', [b.projectId, ref, exportId, expires])}&part=0`);
    const signedWithA = await api(
      `/gdpr/export/download?token=${linkToken(a.signingSecret, [b.projectId, ref, exportId, expiresLater])}&part=0`,
    );

    // Assess
    expect(staged.body.status).toBe('staged');
    expect(own.status).toBe(200);
    expect(renamed).toMatchObject({ status: 403, body: { error: { code: 'export_link_invalid' } } });
    expect(signedWithA).toMatchObject({ status: 403, body: { error: { code: 'export_link_invalid' } } });
  },

  async EraseSubject({ a, b, aAdmin, aRoomId, bMember, bHistory, bMembers, bRooms, sharedUserId }) {
    // Prepare
    const [historyBefore, membersBefore] = await Promise.all([bHistory(), bMembers()]);

    // Act
    const erased = await api('/gdpr/delete', { method: 'DELETE', token: aAdmin });

    // Assess
    expect(erased.body.status).toBe('done');
    expect(((await api(`/rooms/${aRoomId}/members`, { apiKey: a.apiKey })).body.members as any[]).map((m) => m.userId)).not.toContain(
      sharedUserId,
    );
    expect(await bHistory()).toEqual(historyBefore);
    expect(await bMembers()).toEqual(membersBefore);
    expect(((await api('/rooms', { token: bMember })).body.rooms as any[]).map((room) => room.id).sort()).toEqual([...bRooms()].sort());
    await expectAllNotFound(bRooms().map((roomId) => ({ label: roomId, call: () => api(`/rooms/${roomId}`, { token: aAdmin }) })));
    expect((await api('/gdpr/export', { token: await b.token(sharedUserId) })).body.messages).toHaveLength(1);
  },
});
