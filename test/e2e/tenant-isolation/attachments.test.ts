import { expect } from 'vitest';
import { api } from '../../support/api';
import { download, pngBytes, sendBytes, upload, wavBytes } from '../../support/attachments';
import { describeTenantMatrix, expectAllNotFound, tenantsBeforeAll } from '../../support/matrices/tenant-driver';

/**
 * Project A against project B on the Attachments area's routes: A's upload lands under A's prefix
 * only (and is no object of B's, even for the user id both share); B's files are not reachable
 * through A's project in the link, nor by A's ids moved under B's project; A's voice message cannot
 * reach B's rooms. The matrix is `tenant-driver.ts`.
 */

const tenants = tenantsBeforeAll();

/** The segments after `/attachments/`: project, owner ref, object id, filename. */
const segmentsOf = (url: string) => new URL(url).pathname.split('/').slice(2);

describeTenantMatrix('Attachments', tenants, {
  async UploadAttachment({ a, b, aMember, bMember }) {
    // Act
    const [fromA, fromB] = await Promise.all([upload(aMember, pngBytes(), 'image/png'), upload(bMember, pngBytes(), 'image/png')]);

    // Assess: the same user id in both projects owns two different prefixes
    const [aProject, aOwner] = segmentsOf(fromA.body.url);
    const [bProject, bOwner] = segmentsOf(fromB.body.url);
    expect([aProject, bProject]).toEqual([a.projectId, b.projectId]);
    expect(aOwner).not.toBe(bOwner);
  },

  async GetAttachment({ a, b, bMember, aMember }) {
    // Prepare
    const bytes = pngBytes(100);
    const bLink = (await upload(bMember, bytes, 'image/png')).body.url as string;
    const aLink = (await upload(aMember, pngBytes(), 'image/png')).body.url as string;
    const [, bOwner, bObject, bFile] = segmentsOf(bLink);
    const [, aOwner, aObject, aFile] = segmentsOf(aLink);

    // Act + Assess
    await expectAllNotFound(
      [
        { label: "B's ids under A's project", call: () => api(`/attachments/${a.projectId}/${bOwner}/${bObject}/${bFile}`) },
        { label: "A's ids under B's project", call: () => api(`/attachments/${b.projectId}/${aOwner}/${aObject}/${aFile}`) },
        { label: "A's owner with B's object", call: () => api(`/attachments/${b.projectId}/${aOwner}/${bObject}/${bFile}`) },
      ],
      'attachment_not_found',
    );
    expect((await download(bLink)).bytes.equals(bytes)).toBe(true);
  },

  async SendVoiceMessage({ aAdmin, aMember, bRooms, bHistory }) {
    // Prepare
    const before = await Promise.all(bRooms().map((roomId) => bHistory(roomId)));

    // Act + Assess
    await expectAllNotFound(
      bRooms().flatMap((roomId) =>
        [aAdmin, aMember].map((token) => ({
          label: roomId,
          call: () => sendBytes(`/messages/voice?roomId=${roomId}`, wavBytes(0.1), { token, contentType: 'audio/wav' }),
        })),
      ),
    );
    expect(await Promise.all(bRooms().map((roomId) => bHistory(roomId)))).toEqual(before);
  },
});
