import { createHash } from 'node:crypto';
import { jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { verifyPassword } from '#domain/auth/passwords';
import { issueToken, setUserCredentials, signIn } from '#domain/auth/sessions';
import { createProject, rotateProjectKeys } from '#domain/projects/projects';
import { authenticateApiKey, authenticateToken, signingSecretOf } from '#shared/auth';
import { projectItem } from '#shared/db/project';
import { uniqueId } from '../support/api';
import { get } from '../support/raw-table';

/** Projects, API keys and credentials as stored in DynamoDB Local. */

const newProjectId = () => uniqueId('int').toLowerCase();

describe('createProject', () => {
  it('stores the hash of the API key, never the key itself, and the signing secret sealed', async () => {
    // Prepare
    const projectId = newProjectId();

    // Act
    const created = await createProject({ name: 'stored', projectId });

    // Assess
    const item = await get(`P#${projectId}`, 'PROJECT');
    expect(item).toMatchObject({
      projectId,
      name: 'stored',
      apiKeyHash: createHash('sha256').update(created.apiKey).digest('hex'),
    });
    expect(item).not.toHaveProperty('signingSecret');
    expect(await signingSecretOf(projectItem.parse(item))).toBe(created.signingSecret);
    expect(JSON.stringify(item)).not.toContain(created.apiKey);
    expect(JSON.stringify(item)).not.toContain(created.signingSecret);
    expect(await authenticateApiKey(created.apiKey)).toEqual({ kind: 'service', projectId });
  });

  it('refuses a second project with the same id and keeps the first one', async () => {
    // Prepare
    const projectId = newProjectId();
    const first = await createProject({ name: 'first', projectId });

    // Act
    const second = createProject({ name: 'second', projectId });

    // Assess
    await expect(second).rejects.toMatchObject({ statusCode: 409, code: 'project_exists' });
    const kept = await get(`P#${projectId}`, 'PROJECT');
    expect(kept).toMatchObject({ name: 'first' });
    expect(await signingSecretOf(projectItem.parse(kept))).toBe(first.signingSecret);
  });
});

describe('rotateProjectKeys', () => {
  it('replaces the stored hash and secret so old credentials fail at once', async () => {
    // Prepare
    const created = await createProject({ name: 'rotate', projectId: newProjectId() });
    const oldToken = await issueToken(created.projectId, { userId: 'u' });

    // Act
    const rotated = await rotateProjectKeys(created.projectId, { apiKey: true, signingSecret: true });

    // Assess
    const item = await get(`P#${created.projectId}`, 'PROJECT');
    expect(item?.apiKeyHash).toBe(createHash('sha256').update(String(rotated.apiKey)).digest('hex'));
    expect(await signingSecretOf(projectItem.parse(item))).toBe(rotated.signingSecret);
    await expect(authenticateApiKey(created.apiKey)).rejects.toMatchObject({ statusCode: 401, code: 'invalid_api_key' });
    await expect(authenticateToken(oldToken.token, undefined)).rejects.toMatchObject({ statusCode: 401, code: 'invalid_token' });
  });
});

describe('user credentials', () => {
  it('are stored as a salted scrypt hash with the roles, and sign-in returns a verifiable token', async () => {
    // Prepare
    const created = await createProject({ name: 'creds', projectId: newProjectId() });

    // Act
    await setUserCredentials(created.projectId, { userId: 'carol', password: 'carol-password', roles: ['moderator'] });
    const session = await signIn({ projectId: created.projectId, userId: 'carol', password: 'carol-password' });

    // Assess
    const item = await get(`P#${created.projectId}#U#carol`, 'CREDENTIALS');
    expect(item).toMatchObject({ projectId: created.projectId, userId: 'carol', roles: ['moderator'] });
    expect(String(item?.passwordHash)).toMatch(/^scrypt\$\d+\$\d+\$\d+\$[\w-]+\$[\w-]+$/);
    expect(JSON.stringify(item)).not.toContain('carol-password');
    expect(await verifyPassword('carol-password', String(item?.passwordHash))).toBe(true);
    const { payload } = await jwtVerify(session.token, new TextEncoder().encode(created.signingSecret));
    expect(payload).toMatchObject({ projectId: created.projectId, userId: 'carol', roles: ['moderator'] });
  });

  it('hash the same password differently for two users', async () => {
    // Prepare
    const created = await createProject({ name: 'salt', projectId: newProjectId() });

    // Act
    await setUserCredentials(created.projectId, { userId: 'u1', password: 'same-password' });
    await setUserCredentials(created.projectId, { userId: 'u2', password: 'same-password' });

    // Assess
    const [first, second] = await Promise.all([
      get(`P#${created.projectId}#U#u1`, 'CREDENTIALS'),
      get(`P#${created.projectId}#U#u2`, 'CREDENTIALS'),
    ]);
    expect(first?.passwordHash).not.toBe(second?.passwordHash);
  });

  it('of one project do not sign in to another', async () => {
    // Prepare
    const [a, b] = await Promise.all([
      createProject({ name: 'a', projectId: newProjectId() }),
      createProject({ name: 'b', projectId: newProjectId() }),
    ]);
    await setUserCredentials(a.projectId, { userId: 'same', password: 'password-a' });

    // Act
    const attempt = signIn({ projectId: b.projectId, userId: 'same', password: 'password-a' });

    // Assess
    await expect(attempt).rejects.toMatchObject({ statusCode: 401, code: 'invalid_credentials' });
  });
});
