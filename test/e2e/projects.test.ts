import { decodeJwt, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { api, createTestProject, runtime, uniqueId } from '../support/api';
import { get, put } from '../support/raw-table';

const operator = () => ({ 'x-service-operator-key': runtime().operatorKey });
const newProjectId = () => uniqueId('prj').toLowerCase();

describe('POST /platform/projects', () => {
  it('creates a project and returns its API key and signing secret once', async () => {
    // Act
    const created = await api('/platform/projects', { headers: operator(), body: { name: 'Acme chat' } });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      projectId: expect.stringMatching(/^[a-z0-9][a-z0-9-]{1,62}$/),
      name: 'Acme chat',
      apiKey: expect.stringMatching(new RegExp(`^ck_${created.body.projectId}_[A-Za-z0-9_-]{20,}$`)),
      signingSecret: expect.stringMatching(/^[A-Za-z0-9_-]{32,}$/),
    });
    const token = await api('/auth/token', { apiKey: created.body.apiKey, body: { userId: 'first-user' } });
    expect(token.status).toBe(201);
    expect(decodeJwt(token.body.token).projectId).toBe(created.body.projectId);
  });

  it('uses a chosen projectId, and a second project with the same id is a 409 project_exists', async () => {
    // Prepare
    const projectId = newProjectId();

    // Act
    const first = await api('/platform/projects', { headers: operator(), body: { name: 'first', projectId } });
    const second = await api('/platform/projects', { headers: operator(), body: { name: 'second', projectId } });

    // Assess
    expect(first.status).toBe(201);
    expect(first.body.projectId).toBe(projectId);
    expect(second).toMatchObject({ status: 409, body: { error: { code: 'project_exists' } } });
    expect((await api('/auth/token', { apiKey: first.body.apiKey, body: { userId: 'u' } })).status).toBe(201);
  });

  it('gives every project distinct credentials', async () => {
    // Act
    const [a, b] = await Promise.all([createTestProject('a'), createTestProject('b')]);

    // Assess
    expect(a.projectId).not.toBe(b.projectId);
    expect(a.apiKey).not.toBe(b.apiKey);
    expect(a.signingSecret).not.toBe(b.signingSecret);
  });

  describe.each([
    { variant: 'no operator key', headers: {} as Record<string, string> },
    { variant: 'a wrong operator key', headers: { 'x-service-operator-key': 'wrong-operator-key-0123456789' } },
  ])('with $variant', ({ headers }) => {
    it('answers 401 missing_credentials and creates nothing', async () => {
      // Prepare
      const projectId = newProjectId();

      // Act
      const created = await api('/platform/projects', { headers, body: { name: 'x', projectId } });

      // Assess
      expect(created).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
      const retry = await api('/platform/projects', { headers: operator(), body: { name: 'x', projectId } });
      expect(retry.status).toBe(201);
    });
  });

  it('does not accept a project API key in place of the operator key', async () => {
    // Prepare
    const project = await createTestProject();

    // Act
    const created = await api('/platform/projects', { apiKey: project.apiKey, body: { name: 'x' } });

    // Assess
    expect(created).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
  });
});

describe('POST /platform/projects/{projectId}/rotate-keys', () => {
  it('replaces the API key by default: the old key then gets 401 invalid_api_key, the new one works', async () => {
    // Prepare
    const project = await createTestProject();

    // Act
    const rotated = await api(`/platform/projects/${project.projectId}/rotate-keys`, { method: 'POST', headers: operator() });

    // Assess
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({ projectId: project.projectId, apiKey: expect.stringMatching(new RegExp(`^ck_${project.projectId}_`)) });
    expect(rotated.body.apiKey).not.toBe(project.apiKey);
    const withOld = await api('/auth/token', { apiKey: project.apiKey, body: { userId: 'u' } });
    const withNew = await api('/auth/token', { apiKey: rotated.body.apiKey, body: { userId: 'u' } });
    expect(withOld).toMatchObject({ status: 401, body: { error: { code: 'invalid_api_key' } } });
    expect(withNew.status).toBe(201);
  });

  it('keeps user tokens valid when only the API key rotates', async () => {
    // Prepare
    const project = await createTestProject();
    const token = await project.token(uniqueId('user'));

    // Act
    await api(`/platform/projects/${project.projectId}/rotate-keys`, { headers: operator(), body: { apiKey: true } });

    // Assess
    expect((await api('/rooms', { token })).status).toBe(200);
  });

  it('replaces the signing secret on request: tokens signed with the old secret get 401 invalid_token', async () => {
    // Prepare
    const project = await createTestProject();
    const oldToken = await project.token(uniqueId('user'));

    // Act
    const rotated = await api(`/platform/projects/${project.projectId}/rotate-keys`, {
      headers: operator(),
      body: { apiKey: false, signingSecret: true },
    });

    // Assess
    expect(rotated.status).toBe(200);
    expect(rotated.body).toEqual({ projectId: project.projectId, signingSecret: expect.any(String) });
    expect(rotated.body.signingSecret).not.toBe(project.signingSecret);
    expect(await api('/rooms', { token: oldToken })).toMatchObject({ status: 401, body: { error: { code: 'invalid_token' } } });
    const fresh = await api('/auth/token', { apiKey: project.apiKey, body: { userId: 'u' } });
    expect(fresh.status).toBe(201);
    expect((await api('/rooms', { token: fresh.body.token })).status).toBe(200);
  });

  it('rotates both at once', async () => {
    // Prepare
    const project = await createTestProject();

    // Act
    const rotated = await api(`/platform/projects/${project.projectId}/rotate-keys`, {
      headers: operator(),
      body: { apiKey: true, signingSecret: true },
    });

    // Assess
    expect(rotated.status).toBe(200);
    expect(Object.keys(rotated.body).sort()).toEqual(['apiKey', 'projectId', 'signingSecret']);
  });

  it('answers 404 for an unknown project', async () => {
    // Act
    const rotated = await api(`/platform/projects/${newProjectId()}/rotate-keys`, { headers: operator(), body: {} });

    // Assess
    expect(rotated.status).toBe(404);
    expect(rotated.body.error.code).toMatch(/not_found$/);
  });

  it('needs the operator key: without it 401 and the API key keeps working', async () => {
    // Prepare
    const project = await createTestProject();

    // Act
    const rotated = await api(`/platform/projects/${project.projectId}/rotate-keys`, { apiKey: project.apiKey, body: {} });

    // Assess
    expect(rotated).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
    expect((await api('/auth/token', { apiKey: project.apiKey, body: { userId: 'u' } })).status).toBe(201);
  });
});

describe('the signing secret at rest', () => {
  const signedBy = (secret: string, projectId: string) =>
    new SignJWT({ projectId, userId: 'mallory', roles: ['owner'] })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode(secret));

  it('is stored sealed, with the id of its key, and nowhere in plain', async () => {
    // Prepare
    const project = await createTestProject('sealed');

    // Act
    const item = await get(`P#${project.projectId}`, 'PROJECT');

    // Assess
    expect(item).not.toHaveProperty('signingSecret');
    expect(item?.signingSecretSealed).toEqual({
      secretCiphertext: expect.stringMatching(/^[A-Za-z0-9+/]+=*$/),
      secretIv: expect.stringMatching(/^[A-Za-z0-9+/]{16}$/),
      secretKeyId: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    expect(JSON.stringify(item)).not.toContain(project.signingSecret);
    expect(JSON.stringify(item)).not.toContain(Buffer.from(project.signingSecret).toString('base64'));
  });

  it("does not open on another project's item: a stored secret copied there verifies no token, not even one signed with it", async () => {
    // Prepare: B has not been used yet, so no instance holds its project; A's stored secret is copied onto B's item.
    const [a, b] = await Promise.all([createTestProject('owner-of-secret'), createTestProject('target')]);
    const fromA = (await get(`P#${a.projectId}`, 'PROJECT')) as Record<string, unknown>;
    const itemB = (await get(`P#${b.projectId}`, 'PROJECT')) as Record<string, unknown>;
    const moved = Object.fromEntries(Object.entries(fromA).filter(([field]) => field.startsWith('signingSecret')));
    await put({ ...itemB, ...moved });

    // Act
    const forged = await api('/rooms', { token: await signedBy(a.signingSecret, b.projectId) });
    const ownA = await api('/rooms', { token: await signedBy(a.signingSecret, a.projectId) });

    // Assess
    expect(Object.keys(moved).length).toBeGreaterThan(0);
    expect(forged).toMatchObject({ status: 401, body: { error: { code: 'invalid_token' } } });
    expect(ownA.status).toBe(200);
  });

  it('keeps a project created before sealing (its secret in plain) working, and seals it on the next rotate-keys', async () => {
    // Prepare: the item as the service wrote it before sealing existed.
    const project = await createTestProject('legacy');
    const { signingSecretSealed: _, ...item } = (await get(`P#${project.projectId}`, 'PROJECT')) as Record<string, unknown>;
    await put({ ...item, signingSecret: project.signingSecret });

    // Act
    const before = await api('/rooms', { token: await signedBy(project.signingSecret, project.projectId) });
    const rotated = await api(`/platform/projects/${project.projectId}/rotate-keys`, { headers: operator(), body: { apiKey: false } });
    const after = await api('/rooms', { token: await signedBy(project.signingSecret, project.projectId) });
    const stored = await get(`P#${project.projectId}`, 'PROJECT');

    // Assess
    expect(before.status).toBe(200);
    expect(rotated.status).toBe(200);
    expect(after.status).toBe(200);
    expect(stored).not.toHaveProperty('signingSecret');
    expect(stored?.signingSecretSealed).toMatchObject({ secretKeyId: expect.stringMatching(/^[0-9a-f]{16}$/) });
  });
});

describe('GET /health', () => {
  it('answers 200 with the state of DynamoDB', async () => {
    // Act
    const health = await api('/health');

    // Assess
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      status: 'ok',
      dependencies: { dynamodb: { status: 'ok' } },
    });
    expect(Number.isNaN(Date.parse(health.body.time))).toBe(false);
  });
});

describe('the gateway', () => {
  it('answers 404 not_found for an unknown path', async () => {
    // Act
    const response = await api('/no/such/route');

    // Assess
    expect(response).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });
  });

  describe.each([
    { method: 'DELETE', path: '/rooms' },
    { method: 'PUT', path: '/messages' },
    { method: 'POST', path: '/health' },
    { method: 'GET', path: '/rooms/some-room/members/some-user' },
    { method: 'PATCH', path: '/admin/moderation/blocklist' },
  ])('$method $path', ({ method, path }) => {
    it('answers 405 method_not_allowed', async () => {
      // Act
      const response = await api(path, { method });

      // Assess
      expect(response).toMatchObject({ status: 405, body: { error: { code: 'method_not_allowed' } } });
    });
  });

  it('echoes X-Trace-Id on responses', async () => {
    // Prepare
    const traceId = uniqueId('trace');

    // Act
    const response = await api('/health', { headers: { 'x-trace-id': traceId } });

    // Assess
    expect(response.headers.get('x-trace-id')).toBe(traceId);
  });

  it.each([
    { name: 'longer than 128 characters', traceId: 'a'.repeat(129) },
    { name: 'with a quote and braces', traceId: '"},{"admin":true' },
    { name: 'with spaces', traceId: 'trace id' },
    { name: 'with non-ASCII letters', traceId: 'trâce' },
  ])('replaces an X-Trace-Id $name with an id of its own', async ({ traceId }) => {
    // Act
    const response = await api('/health', { headers: { 'x-trace-id': traceId } });

    // Assess
    const echoed = response.headers.get('x-trace-id');
    expect(echoed).not.toBe(traceId);
    expect(echoed).toMatch(/^[A-Za-z0-9._:=-]{1,128}$/);
  });

  it('keeps an X-Trace-Id of 128 characters in the W3C and X-Ray spellings', async () => {
    // Prepare
    const traceIds = [
      'b'.repeat(128),
      '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      'Root=1-5759e988-bd862e3fe1be46a994272793',
    ];

    // Act
    const echoed = await Promise.all(
      traceIds.map(async (traceId) => (await api('/health', { headers: { 'x-trace-id': traceId } })).headers.get('x-trace-id')),
    );

    // Assess
    expect(echoed).toEqual(traceIds);
  });
});
