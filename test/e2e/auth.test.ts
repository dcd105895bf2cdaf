import { decodeJwt, jwtVerify, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, createTestProject, type TestProject, uniqueId } from '../support/api';

const secretBytes = (secret: string) => new TextEncoder().encode(secret);

/** A token signed the way a customer's backend would: HS256 with the project's signing secret. */
async function customerToken(
  project: TestProject,
  claims: Record<string, unknown>,
  options: { secret?: string; expiresAt?: number | string | null; subject?: string } = {},
): Promise<string> {
  let jwt = new SignJWT({ projectId: project.projectId, ...claims }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).setIssuedAt();
  if (options.subject) jwt = jwt.setSubject(options.subject);
  if (options.expiresAt !== null) jwt = jwt.setExpirationTime(options.expiresAt ?? '10m');
  return jwt.sign(secretBytes(options.secret ?? project.signingSecret));
}

const base64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('POST /auth/token', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createTestProject('auth');
  });

  it('mints an HS256 JWT with projectId, userId, sub, roles and a one-hour default expiry', async () => {
    // Prepare
    const userId = uniqueId('user');
    const before = Math.floor(Date.now() / 1000);

    // Act
    const issued = await api('/auth/token', { apiKey: project.apiKey, body: { userId, roles: ['moderator'] } });

    // Assess
    expect(issued.status).toBe(201);
    const { payload, protectedHeader } = await jwtVerify(issued.body.token, secretBytes(project.signingSecret), { algorithms: ['HS256'] });
    expect(protectedHeader.alg).toBe('HS256');
    expect(payload).toMatchObject({ projectId: project.projectId, userId, sub: userId, roles: ['moderator'] });
    expect(payload.exp).toBeGreaterThanOrEqual(before + 3600);
    expect(payload.exp).toBeLessThanOrEqual(before + 3602);
    expect(Date.parse(issued.body.expiresAt)).toBe((payload.exp as number) * 1000);
  });

  it('defaults roles to member and honours expiresIn', async () => {
    // Prepare
    const userId = uniqueId('user');
    const before = Math.floor(Date.now() / 1000);

    // Act
    const issued = await api('/auth/token', { apiKey: project.apiKey, body: { userId, expiresIn: 120 } });

    // Assess
    expect(issued.status).toBe(201);
    const claims = decodeJwt(issued.body.token);
    expect(claims.roles).toEqual(['member']);
    expect(claims.exp).toBeGreaterThanOrEqual(before + 120);
    expect(claims.exp).toBeLessThanOrEqual(before + 122);
  });

  it('accepts the maximum lifetime of 86400 s and rejects 86401 s', async () => {
    // Act
    const atMax = await api('/auth/token', { apiKey: project.apiKey, body: { userId: uniqueId('user'), expiresIn: 86_400 } });
    const overMax = await api('/auth/token', { apiKey: project.apiKey, body: { userId: uniqueId('user'), expiresIn: 86_401 } });

    // Assess
    expect(atMax.status).toBe(201);
    expect(overMax).toMatchObject({ status: 400, body: { error: { code: 'validation_failed', details: [{ field: 'body.expiresIn' }] } } });
  });

  it('issues a token the API then accepts', async () => {
    // Prepare
    const token = await project.token(uniqueId('user'));

    // Act
    const listed = await api('/rooms', { token });

    // Assess
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ rooms: [], nextCursor: null });
  });

  describe.each([
    { variant: 'no API key', apiKey: undefined, code: 'missing_credentials' },
    { variant: 'a malformed API key', apiKey: 'not-a-key', code: 'invalid_api_key' },
    { variant: 'an API key of an unknown project', apiKey: 'ck_no-such-project_AAAAAAAAAAAAAAAAAAAAAAAA', code: 'invalid_api_key' },
  ])('with $variant', ({ apiKey, code }) => {
    it(`answers 401 ${code}`, async () => {
      // Act
      const issued = await api('/auth/token', { ...(apiKey ? { apiKey } : {}), body: { userId: 'someone' } });

      // Assess
      expect(issued).toMatchObject({ status: 401, body: { error: { code } } });
    });
  });

  it('answers 401 invalid_api_key for a forged key that carries the project id but not its secret', async () => {
    // Act
    const issued = await api('/auth/token', {
      apiKey: `ck_${project.projectId}_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`,
      body: { userId: 'someone' },
    });

    // Assess
    expect(issued).toMatchObject({ status: 401, body: { error: { code: 'invalid_api_key' } } });
  });

  it('does not accept a user JWT in place of the API key', async () => {
    // Prepare
    const token = await project.token(uniqueId('user'), ['owner']);

    // Act
    const issued = await api('/auth/token', { token, body: { userId: 'someone' } });

    // Assess
    expect(issued).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
  });
});

describe('customer-minted tokens (jose SignJWT HS256 with the signing secret)', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createTestProject('customer-jwt');
  });

  it('are accepted and act as the named user', async () => {
    // Prepare
    const userId = uniqueId('user');
    const token = await customerToken(project, { userId, roles: ['member'] }, { subject: userId });
    const roomId = uniqueId('room');

    // Act
    const created = await api('/rooms', { token, body: { id: roomId, type: 'group', members: [] } });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body.createdBy).toBe(userId);
  });

  it('take the user from sub when the userId claim is absent, and treat a token without roles as a member', async () => {
    // Prepare
    const userId = uniqueId('user');
    const token = await customerToken(project, {}, { subject: userId });
    const roomId = uniqueId('room');

    // Act
    const created = await api('/rooms', { token, body: { id: roomId, type: 'group' } });

    // Assess
    expect(created.status).toBe(201);
    expect(created.body.createdBy).toBe(userId);
  });

  it('carry their roles: a guest-only token may not create rooms', async () => {
    // Prepare
    const token = await customerToken(project, { userId: uniqueId('guest'), roles: ['guest'] });

    // Act
    const created = await api('/rooms', { token, body: { type: 'group' } });

    // Assess
    expect(created).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
  });

  describe.each([
    {
      variant: 'signed with another secret',
      make: (p: TestProject) => customerToken(p, { userId: 'mallory' }, { secret: 'another-secret-of-sufficient-length-0123' }),
      code: 'invalid_token',
      says: "The token's signature does not verify: sign it with HS256, keyed with the project's signingSecret as a UTF-8 string",
    },
    {
      variant: 'with alg none',
      make: async (p: TestProject) =>
        `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ projectId: p.projectId, userId: 'mallory', roles: ['owner'], exp: Math.floor(Date.now() / 1000) + 600 })}.`,
      code: 'invalid_token',
    },
    {
      variant: 'with an HS256 signature but a tampered payload',
      make: async (p: TestProject) => {
        const [header, , signature] = (await customerToken(p, { userId: 'mallory', roles: ['member'] })).split('.');
        const payload = base64url({
          projectId: p.projectId,
          userId: 'mallory',
          roles: ['owner'],
          exp: Math.floor(Date.now() / 1000) + 600,
        });
        return `${header}.${payload}.${signature}`;
      },
      code: 'invalid_token',
    },
    {
      variant: 'with an HS512 signature (not on the allow-list)',
      make: (p: TestProject) =>
        new SignJWT({ projectId: p.projectId, userId: 'mallory' })
          .setProtectedHeader({ alg: 'HS512' })
          .setExpirationTime('10m')
          .sign(secretBytes(p.signingSecret)),
      code: 'invalid_token',
      says: 'The token must be signed with HS256',
    },
    {
      variant: 'without exp',
      make: (p: TestProject) => customerToken(p, { userId: 'mallory' }, { expiresAt: null }),
      code: 'invalid_token',
      says: 'The token has no `exp` claim: every token must expire (exp, in seconds since 1970)',
    },
    {
      variant: 'whose exp is not a number',
      make: (p: TestProject) => customerToken(p, { userId: 'mallory', exp: 'tomorrow' }, { expiresAt: null }),
      code: 'invalid_token',
      says: "The token's `exp` claim must be a number of seconds since 1970",
    },
    {
      variant: 'without a projectId claim',
      make: (p: TestProject) => customerToken(p, { userId: 'mallory', projectId: undefined }),
      code: 'invalid_token',
      says: 'The token has no `projectId` claim naming its project',
    },
    {
      variant: 'naming an unknown project',
      make: (p: TestProject) => customerToken(p, { userId: 'mallory', projectId: 'no-such-project-x' }),
      code: 'invalid_token',
    },
    {
      variant: 'without any user (no userId, no sub)',
      make: (p: TestProject) => customerToken(p, {}),
      code: 'invalid_token',
      says: 'The token has no `userId` claim (nor `sub`) naming its user',
    },
    { variant: 'that is not a JWT', make: async () => 'definitely-not-a-jwt', code: 'invalid_token' },
    {
      variant: "that is the project's API key",
      make: async (p: TestProject) => p.apiKey,
      code: 'invalid_token',
      says: 'This is a project API key, not a user JWT: send it in the X-Service-Api-Key header (on the routes that take one), and give users a token from POST /auth/token',
    },
    {
      variant: 'whose projectId claim is longer than a key may be',
      make: async () => `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url({ projectId: 'p'.repeat(2100) })}.x`,
      code: 'invalid_token',
    },
    {
      variant: 'whose projectId claim holds characters no project id has',
      make: async () => `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url({ projectId: 'P#ROOMS' })}.x`,
      code: 'invalid_token',
    },
    {
      variant: "whose userId contains '#' (ids must not, they are part of keys)",
      make: (p: TestProject) => customerToken(p, { userId: 'mallory#ROOMS' }),
      code: 'invalid_token',
    },
    {
      variant: 'whose userId is longer than 128 characters',
      make: (p: TestProject) => customerToken(p, { userId: 'm'.repeat(2000) }),
      code: 'invalid_token',
    },
    {
      variant: 'that has expired',
      make: (p: TestProject) => customerToken(p, { userId: 'late' }, { expiresAt: Math.floor(Date.now() / 1000) - 60 }),
      code: 'token_expired',
    },
  ] as { variant: string; make: (p: TestProject) => Promise<string>; code: string; says?: string }[])(
    'a token $variant',
    ({ make, code, says }) => {
      it(`is refused with 401 ${code}${says ? ' saying what to change' : ''}`, async () => {
        // Prepare
        const token = await make(project);

        // Act
        const listed = await api('/rooms', { token });

        // Assess
        expect(listed).toMatchObject({ status: 401, body: { error: { code, ...(says ? { message: says } : {}) } } });
      });
    },
  );

  it('an API key sent as a bearer token to an API-key route is told to use X-Service-Api-Key', async () => {
    // Act
    const minted = await api('/auth/token', { headers: { authorization: `Bearer ${project.apiKey}` }, body: { userId: 'ops' } });

    // Assess
    expect(minted).toMatchObject({
      status: 401,
      body: {
        error: { code: 'missing_credentials', message: 'The API key goes in the X-Service-Api-Key header, not in Authorization: Bearer' },
      },
    });
  });

  describe.each([
    { variant: 'no Authorization header', headers: {} as Record<string, string> },
    { variant: 'a Basic Authorization header', headers: { authorization: 'Basic dXNlcjpwYXNz' } },
    { variant: 'an empty Bearer', headers: { authorization: 'Bearer ' } },
  ])('a user route with $variant', ({ headers }) => {
    it('answers 401 missing_credentials', async () => {
      // Act
      const listed = await api('/rooms', { headers });

      // Assess
      expect(listed).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
    });
  });

  it('a user-only route ignores the API key and asks for a bearer token', async () => {
    // Act
    const listed = await api('/rooms', { apiKey: project.apiKey });

    // Assess
    expect(listed).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
  });
});

describe('PUT /users/{userId}/credentials and POST /auth/signin', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createTestProject('signin');
  });

  it('sets a password and roles; sign-in returns a session token carrying them', async () => {
    // Prepare
    const userId = uniqueId('user');
    const set = await api(`/users/${userId}/credentials`, {
      method: 'PUT',
      apiKey: project.apiKey,
      body: { password: 'correct horse battery', roles: ['moderator'] },
    });

    // Act
    const signedIn = await api('/auth/signin', { body: { projectId: project.projectId, userId, password: 'correct horse battery' } });

    // Assess
    expect(set.status).toBe(204);
    expect(signedIn.status).toBe(200);
    expect(Object.keys(signedIn.body).sort()).toEqual(['expiresAt', 'token']);
    const { payload } = await jwtVerify(signedIn.body.token, secretBytes(project.signingSecret), { algorithms: ['HS256'] });
    expect(payload).toMatchObject({ projectId: project.projectId, userId, sub: userId, roles: ['moderator'] });
    const blockList = await api('/admin/moderation/blocklist', { token: signedIn.body.token });
    expect(blockList.status).toBe(200);
  });

  it('defaults the roles of a signed-in user to member', async () => {
    // Prepare
    const userId = uniqueId('user');
    await api(`/users/${userId}/credentials`, { method: 'PUT', apiKey: project.apiKey, body: { password: 'password-123' } });

    // Act
    const signedIn = await api('/auth/signin', { body: { projectId: project.projectId, userId, password: 'password-123', expiresIn: 60 } });

    // Assess
    expect(signedIn.status).toBe(200);
    const claims = decodeJwt(signedIn.body.token);
    expect(claims.roles).toEqual(['member']);
    expect((claims.exp as number) - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(61);
  });

  it('replaces the password: the old one stops working', async () => {
    // Prepare
    const userId = uniqueId('user');
    await api(`/users/${userId}/credentials`, { method: 'PUT', apiKey: project.apiKey, body: { password: 'first-password' } });
    await api(`/users/${userId}/credentials`, { method: 'PUT', apiKey: project.apiKey, body: { password: 'second-password' } });

    // Act
    const withOld = await api('/auth/signin', { body: { projectId: project.projectId, userId, password: 'first-password' } });
    const withNew = await api('/auth/signin', { body: { projectId: project.projectId, userId, password: 'second-password' } });

    // Assess
    expect(withOld).toMatchObject({ status: 401, body: { error: { code: 'invalid_credentials' } } });
    expect(withNew.status).toBe(200);
  });

  describe.each([
    { variant: 'a wrong password', userId: 'known', password: 'wrong-password', projectId: undefined },
    { variant: 'an unknown user', userId: 'nobody-here', password: 'known-password', projectId: undefined },
    { variant: 'an unknown project', userId: 'known', password: 'known-password', projectId: 'no-such-project-y' },
  ])('sign-in with $variant', ({ userId, password, projectId }) => {
    it('answers 401 invalid_credentials and no token', async () => {
      // Prepare
      const knownUser = uniqueId('known');
      await api(`/users/${knownUser}/credentials`, { method: 'PUT', apiKey: project.apiKey, body: { password: 'known-password' } });

      // Act
      const signedIn = await api('/auth/signin', {
        body: { projectId: projectId ?? project.projectId, userId: userId === 'known' ? knownUser : userId, password },
      });

      // Assess
      expect(signedIn.status).toBe(401);
      expect(signedIn.body).toEqual({ error: { code: 'invalid_credentials', message: expect.any(String), traceId: expect.any(String) } });
    });
  });

  it('setting credentials needs the API key: a user JWT is refused', async () => {
    // Prepare
    const token = await project.token(uniqueId('owner'), ['owner']);

    // Act
    const set = await api('/users/victim/credentials', { method: 'PUT', token, body: { password: 'password-123' } });

    // Assess
    expect(set).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
  });
});

describe('user ids an agent speaks as (agent:<handle>)', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createTestProject('agent-ids');
  });

  it('are refused a token from POST /auth/token with 400 reserved_id', async () => {
    // Act
    const issued = await api('/auth/token', { apiKey: project.apiKey, body: { userId: 'agent:helper' } });

    // Assess
    expect(issued).toMatchObject({ status: 400, body: { error: { code: 'reserved_id', details: [{ field: 'body.userId' }] } } });
  });

  it('get no credentials from PUT /users/{userId}/credentials (400 reserved_id)', async () => {
    // Act
    const set = await api(`/users/${encodeURIComponent('agent:helper')}/credentials`, {
      method: 'PUT',
      apiKey: project.apiKey,
      body: { password: 'long-enough-password' },
    });

    // Assess
    expect(set).toMatchObject({ status: 400, body: { error: { code: 'reserved_id', details: [{ field: 'path.userId' }] } } });
  });

  it.each([
    { claim: 'userId', claims: { userId: 'agent:helper' }, subject: undefined },
    { claim: 'sub', claims: {}, subject: 'agent:helper' },
  ])('are refused in a customer-minted token ($claim) with 401 invalid_token', async ({ claims, subject }) => {
    // Prepare
    const token = await customerToken(project, claims, subject ? { subject } : {});

    // Act
    const posted = await api('/rooms', { token, body: { id: uniqueId('room'), type: 'group' } });

    // Assess
    expect(posted).toMatchObject({ status: 401, body: { error: { code: 'invalid_token' } } });
  });
});
