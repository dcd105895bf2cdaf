import { beforeAll, describe, expect, it } from 'vitest';
import { api, createTestProject, newGroupRoom, newUser, type TestProject, uniqueId } from '../support/api';
import { download, jpegBytes, multipartBody, pdfBytes, pngBytes, sendBytes, upload } from '../support/attachments';

/**
 * Attachments through the shared local runtime over real HTTP: `POST /upload` stores the bytes in
 * the S3 stand-in (s3rver) through the real S3 client, and the link it answers redirects to a
 * presigned URL that serves the same bytes with their type. Restarts and a runtime without a
 * bucket are `attachments-runtime.test.ts`; voice messages `voice-messages.test.ts`.
 */

let project: TestProject;
let user: { userId: string; token: string };

beforeAll(async () => {
  project = await createTestProject('attachments');
  user = await newUser(project);
});

describe('POST /upload, then the link', () => {
  it('a raw PNG comes back byte for byte as image/png, shown inline, through a short-lived redirect with nosniff', async () => {
    // Prepare
    const bytes = pngBytes(3000);

    // Act
    const uploaded = await upload(user.token, bytes, 'image/png', { filename: 'cat photo.png' });
    const { redirect, file, bytes: served } = await download(uploaded.body.url);

    // Assess
    expect(uploaded.status).toBe(201);
    expect(uploaded.body).toMatchObject({ contentType: 'image/png', size: bytes.length, filename: 'cat_photo.png' });
    expect(uploaded.body.url).toMatch(new RegExp(`/attachments/${project.projectId}/[\\w-]{22}/[\\w-]{22}/cat_photo\\.png$`));
    expect(redirect.headers.get('x-content-type-options')).toBe('nosniff');
    expect(redirect.headers.get('cache-control')).toMatch(/^private, max-age=\d+$/);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toBe('image/png');
    expect(file.headers.get('content-disposition')).toBe('inline; filename="cat_photo.png"');
    expect(served.equals(bytes)).toBe(true);
  });

  it('a file just under the limit arrives intact through the base64 event', async () => {
    // Prepare
    const bytes = pngBytes(4 * 1024 * 1024 - 200);

    // Act
    const uploaded = await upload(user.token, bytes, 'image/png');
    const { bytes: served } = await download(uploaded.body.url);

    // Assess
    expect(uploaded.body).toMatchObject({ size: bytes.length });
    expect(served.equals(bytes)).toBe(true);
  });

  it('a multipart file part (a browser form) keeps its bytes and type; its name is sanitized; a PDF downloads', async () => {
    // Prepare
    const bytes = pdfBytes();
    const form = multipartBody({ bytes, contentType: 'application/pdf', filename: '../../etc/my report (1).pdf' });

    // Act
    const uploaded = await sendBytes('/upload', form.body, { token: user.token, contentType: form.contentType });
    const { file, bytes: served } = await download(uploaded.body.url);

    // Assess
    expect(uploaded.status).toBe(201);
    expect(uploaded.body).toMatchObject({ contentType: 'application/pdf', filename: 'my_report_1_.pdf', size: bytes.length });
    expect(file.headers.get('content-type')).toBe('application/pdf');
    expect(file.headers.get('content-disposition')).toBe('attachment; filename="my_report_1_.pdf"');
    expect(served.equals(bytes)).toBe(true);
  });

  it('UTF-8 text is stored as text/plain; charset=utf-8 and downloads', async () => {
    // Prepare
    const bytes = Buffer.from('Grüße — naïve café ☕\nline two\n', 'utf8');

    // Act
    const uploaded = await upload(user.token, bytes, 'text/plain; charset=utf-8');
    const { file, bytes: served } = await download(uploaded.body.url);

    // Assess
    expect(uploaded.body).toMatchObject({ contentType: 'text/plain; charset=utf-8', filename: 'upload.txt' });
    expect(file.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(file.headers.get('content-disposition')).toBe('attachment; filename="upload.txt"');
    expect(served.equals(bytes)).toBe(true);
  });

  it('a link nobody made answers 404 attachment_not_found (JSON, not S3 XML)', async () => {
    // Act
    const response = await api(`/attachments/${project.projectId}/${'A'.repeat(22)}/${'B'.repeat(22)}/x.png`);

    // Assess
    expect(response).toMatchObject({ status: 404, body: { error: { code: 'attachment_not_found' } } });
  });
});

describe('POST /upload refuses', () => {
  it.each([
    { label: 'an empty body', bytes: () => Buffer.alloc(0), type: 'image/png', status: 400, code: 'empty_upload' },
    { label: 'a file over 4 MiB', bytes: () => pngBytes(4 * 1024 * 1024), type: 'image/png', status: 413, code: 'upload_too_large' },
    {
      label: 'a type off the allow-list',
      bytes: () => Buffer.from('MZ\x90\x00'),
      type: 'application/x-msdownload',
      status: 415,
      code: 'unsupported_media_type',
    },
    { label: 'no Content-Type', bytes: () => pngBytes(), type: undefined, status: 415, code: 'unsupported_media_type' },
    { label: 'JPEG bytes declared as PNG', bytes: jpegBytes, type: 'image/png', status: 415, code: 'content_type_mismatch' },
    { label: 'PNG bytes declared as text', bytes: () => pngBytes(), type: 'text/plain', status: 415, code: 'content_type_mismatch' },
    {
      label: 'text that is not UTF-8',
      bytes: () => Buffer.from([0x48, 0x69, 0xff, 0xfe, 0x00]),
      type: 'text/plain',
      status: 415,
      code: 'content_type_mismatch',
    },
    {
      label: 'bytes with no signature declared as PDF',
      bytes: () => Buffer.from('just words'),
      type: 'application/pdf',
      status: 415,
      code: 'content_type_mismatch',
    },
  ])('$label → $status $code', async ({ bytes, type, status, code }) => {
    // Act
    const response = await sendBytes('/upload', bytes(), { token: user.token, ...(type ? { contentType: type } : {}) });

    // Assess
    expect(response).toMatchObject({ status, body: { error: { code } } });
  });

  it.each([
    { label: 'two file parts', form: () => multipartBody({ bytes: pngBytes(), contentType: 'image/png', filename: 'a.png' }, {}, 1) },
    {
      label: 'no file part',
      form: () => ({
        ...multipartBody({ bytes: pngBytes(), contentType: 'image/png', filename: 'a.png' }),
        body: Buffer.from('--x--\r\n'),
      }),
    },
  ])('a multipart body with $label → 400 invalid_multipart', async ({ form }) => {
    // Prepare
    const { body, contentType } = form();

    // Act
    const response = await sendBytes('/upload', body, { token: user.token, contentType });

    // Assess
    expect(response).toMatchObject({ status: 400, body: { error: { code: 'invalid_multipart' } } });
  });

  it('without a token → 401', async () => {
    // Act
    const response = await sendBytes('/upload', pngBytes(), { contentType: 'image/png' });

    // Assess
    expect(response.status).toBe(401);
  });
});

describe('an uploaded link as a message attachment', () => {
  it('is accepted by POST /messages and shown in history', async () => {
    // Prepare
    const { owner, roomId } = await newGroupRoom(project);
    const uploaded = await upload(owner.token, pngBytes(), 'image/png');

    // Act
    const sent = await api('/messages', { token: owner.token, body: { roomId, content: 'look', attachments: [uploaded.body.url] } });
    const history = await api(`/rooms/${roomId}/messages`, { token: owner.token });

    // Assess
    expect(sent.status).toBe(201);
    expect(history.body.messages.map((message: any) => message.attachments)).toContainEqual([uploaded.body.url]);
  });
});

describe('another project', () => {
  it("cannot read an object by guessing: its own ids under A's project, or a fresh id, are 404; A's own link works", async () => {
    // Prepare
    const other = await createTestProject('attachments-other');
    const stranger = await newUser(other);
    const ownLink = new URL((await upload(user.token, pngBytes(), 'image/png')).body.url);
    const theirs = new URL((await upload(stranger.token, pngBytes(), 'image/png')).body.url);
    const [, , , ownerRef, objectId, filename] = theirs.pathname.split('/');
    const [, , , aOwnerRef, , aFilename] = ownLink.pathname.split('/');

    // Act
    const theirIdsUnderA = await api(`/attachments/${project.projectId}/${ownerRef}/${objectId}/${filename}`);
    const guessedUnderA = await api(
      `/attachments/${project.projectId}/${aOwnerRef}/${uniqueId('x').slice(0, 8).padEnd(22, 'Q')}/${aFilename}`,
    );
    const own = await fetch(ownLink, { redirect: 'manual' });

    // Assess
    expect(theirIdsUnderA).toMatchObject({ status: 404, body: { error: { code: 'attachment_not_found' } } });
    expect(guessedUnderA).toMatchObject({ status: 404, body: { error: { code: 'attachment_not_found' } } });
    expect(own.status).toBe(302);
  });
});

describe('GDPR', () => {
  it("the export lists the subject's uploads, and the erasure deletes them: their links answer 404", async () => {
    // Prepare
    const subject = await newUser(project, 'subject', ['admin']);
    const bystander = await newUser(project);
    const [first, second, kept] = await Promise.all([
      upload(subject.token, pngBytes(), 'image/png'),
      upload(subject.token, pdfBytes(), 'application/pdf'),
      upload(bystander.token, pngBytes(), 'image/png'),
    ]);

    // Act
    const exported = await api('/gdpr/export', { token: subject.token });
    const erased = await api('/gdpr/delete', { method: 'DELETE', token: subject.token });

    // Assess
    const paths = [first, second].map((uploaded) => new URL(uploaded.body.url).pathname);
    expect(exported.body.uploads.map((entry: any) => entry.path).sort()).toEqual(paths.sort());
    expect(erased.body.steps.uploads).toBe(2);
    for (const path of paths) expect(await api(path)).toMatchObject({ status: 404, body: { error: { code: 'attachment_not_found' } } });
    expect((await fetch(kept.body.url, { redirect: 'manual' })).status).toBe(302);
  });
});
