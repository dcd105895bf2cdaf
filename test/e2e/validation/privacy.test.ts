import { beforeAll, describe, expect, it } from 'vitest';
import { api, type TestProject, uniqueId } from '../../support/api';
import {
  createValidationProject,
  describeValidationMatrix,
  expectInvalid,
  type RouteRequests,
} from '../../support/matrices/validation-driver';

/**
 * Bad input to the Privacy area's routes: export and erasure take no input but the token; the
 * download link takes its `token` and `part` query parameters, checked here. The checks common to
 * every route are the matrix's (`validation-driver.ts`).
 */

let project: TestProject;
/** A staged export's first part: the shared runtime stages exports over 32 KB. */
let link: string;
let memberToken: string;
let adminToken: string;

beforeAll(async () => {
  ({ project } = await createValidationProject('validation-privacy'));
  const userId = uniqueId('big');
  const token = await project.token(userId);
  const roomId = uniqueId('room');
  await api('/rooms', { token, body: { id: roomId, type: 'group' } });
  for (let index = 0; index < 24; index++) await api('/messages', { token, body: { roomId, content: `${index} ${'x'.repeat(1500)}` } });
  link = (await api('/gdpr/export', { token })).body.parts[0];
  memberToken = await project.token(uniqueId('member'));
  adminToken = await project.token(uniqueId('admin'), ['admin']);
});

const tokenOf = () => new URL(link, 'http://x').searchParams.get('token') ?? '';

/** How to make a request each route of the area accepts; the erasure erases the admin's own subject (again: done). */
const requests: RouteRequests = {
  ExportSubjectData: { path: () => '/gdpr/export', auth: () => ({ token: memberToken }), success: 200 },
  DownloadSubjectExport: { path: () => link, auth: () => ({}), success: 200 },
  EraseSubject: { path: () => '/gdpr/delete', auth: () => ({ token: adminToken }), success: 200 },
};

describe('GET /gdpr/export/download query parameters', () => {
  it.each([
    { query: () => `token=${tokenOf()}`, field: 'query.part' },
    { query: () => `token=${tokenOf()}&part=x`, field: 'query.part' },
    { query: () => `token=${tokenOf()}&part=-1`, field: 'query.part' },
    { query: () => `token=${tokenOf()}&part=1.5`, field: 'query.part' },
    { query: () => `token=${tokenOf()}&part=1000000`, field: 'query.part' },
    { query: () => 'part=0', field: 'query.token' },
    { query: () => 'token=&part=0', field: 'query.token' },
    { query: () => `token=${'a'.repeat(2049)}&part=0`, field: 'query.token' },
    { query: () => `token=${tokenOf()}&part=0&extra=1`, field: 'query' },
  ])('?$field → 400 naming it', async ({ query, field }) => {
    // Act
    const response = await api(`/gdpr/export/download?${query()}`);

    // Assess
    expectInvalid(response, field);
  });

  it.each(['nodot', 'a.b', 'a.b.c', '%7B%7D.x'])('a malformed token (%s) → 403 export_link_invalid', async (token) => {
    // Act
    const response = await api(`/gdpr/export/download?token=${token}&part=0`);

    // Assess
    expect(response).toMatchObject({ status: 403, body: { error: { code: 'export_link_invalid' } } });
  });
});

describeValidationMatrix('Privacy', requests, {});
