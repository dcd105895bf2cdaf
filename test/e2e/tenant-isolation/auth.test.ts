import { decodeJwt, SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, runtime, uniqueId } from '../../support/api';
import { describeTenantMatrix, expectAllNotFound, NOT_FOUND, tenantsBeforeAll } from '../../support/matrices/tenant-driver';

/** Project A against project B on the Auth area's routes (projects, tokens, sign-in) and credentials; the matrix is `tenant-driver.ts`. */

const tenants = tenantsBeforeAll();

const B_PASSWORD = 'b-password-123';

beforeAll(async () => {
  const { b, sharedUserId } = tenants();
  await api(`/users/${sharedUserId}/credentials`, { method: 'PUT', apiKey: b.apiKey, body: { password: B_PASSWORD } });
});

describeTenantMatrix('Auth', tenants, {
  async CreateProject({ a, b, bMember }) {
    // Act
    const takeover = await api('/platform/projects', {
      headers: { 'x-service-operator-key': runtime().operatorKey },
      body: { name: 'takeover', projectId: b.projectId },
    });
    const byTenant = await api('/platform/projects', { apiKey: a.apiKey, body: { name: 'x', projectId: uniqueId('p').toLowerCase() } });

    // Assess
    expect(takeover).toMatchObject({ status: 409, body: { error: { code: 'project_exists' } } });
    expect(byTenant.status).toBe(401);
    expect((await api('/rooms', { token: bMember })).status).toBe(200);
    expect((await api('/auth/token', { apiKey: b.apiKey, body: { userId: 'u' } })).status).toBe(201);
  },

  async RotateProjectKeys({ a, b, aAdmin, bMember }) {
    // Act
    const byKey = await api(`/platform/projects/${b.projectId}/rotate-keys`, { apiKey: a.apiKey, body: { signingSecret: true } });
    const byAdmin = await api(`/platform/projects/${b.projectId}/rotate-keys`, { token: aAdmin, body: { signingSecret: true } });

    // Assess
    expect(byKey).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
    expect(byAdmin).toMatchObject({ status: 401, body: { error: { code: 'missing_credentials' } } });
    expect((await api('/auth/token', { apiKey: b.apiKey, body: { userId: 'u' } })).status).toBe(201);
    expect((await api('/rooms', { token: bMember })).status).toBe(200);
  },

  async CreateToken({ a, b, sharedUserId, bRooms }) {
    // Act
    const minted = await api('/auth/token', { apiKey: a.apiKey, body: { userId: sharedUserId, roles: ['owner'] } });
    const smuggled = await api('/auth/token', { apiKey: a.apiKey, body: { userId: sharedUserId, projectId: b.projectId } });

    // Assess
    expect(minted.status).toBe(201);
    expect(decodeJwt(minted.body.token).projectId).toBe(a.projectId);
    expect(smuggled).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    await expectAllNotFound(
      bRooms().map((roomId) => ({ label: roomId, call: () => api(`/rooms/${roomId}`, { token: minted.body.token }) })),
    );
  },

  async SignIn({ a, b, sharedUserId, aRoomId }) {
    // Act
    const intoA = await api('/auth/signin', { body: { projectId: a.projectId, userId: sharedUserId, password: B_PASSWORD } });
    const intoB = await api('/auth/signin', { body: { projectId: b.projectId, userId: sharedUserId, password: B_PASSWORD } });

    // Assess
    expect(intoA).toMatchObject({ status: 401, body: { error: { code: 'invalid_credentials' } } });
    expect(intoB.status).toBe(200);
    expect(decodeJwt(intoB.body.token).projectId).toBe(b.projectId);
    expect(await api(`/rooms/${aRoomId}`, { token: intoB.body.token })).toMatchObject(NOT_FOUND);
  },

  async SetUserCredentials({ a, b, sharedUserId }) {
    // Act
    const set = await api(`/users/${sharedUserId}/credentials`, { method: 'PUT', apiKey: a.apiKey, body: { password: 'a-password-456' } });

    // Assess
    expect(set.status).toBe(204);
    const withA = await api('/auth/signin', { body: { projectId: b.projectId, userId: sharedUserId, password: 'a-password-456' } });
    const withB = await api('/auth/signin', { body: { projectId: b.projectId, userId: sharedUserId, password: B_PASSWORD } });
    expect(withA).toMatchObject({ status: 401, body: { error: { code: 'invalid_credentials' } } });
    expect(withB.status).toBe(200);
  },
});

describe('tenant isolation beyond the HTTP routes', () => {
  it("does not let A's signing secret mint tokens for project B", async () => {
    // Prepare
    const { a, b, sharedUserId, bRoomId } = tenants();
    const forged = await new SignJWT({ projectId: b.projectId, userId: sharedUserId, roles: ['owner'] })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(a.signingSecret));

    // Act
    const response = await api(`/rooms/${bRoomId}`, { token: forged });

    // Assess
    expect(response).toMatchObject({ status: 401, body: { error: { code: 'invalid_token' } } });
  });

  it("does not accept an API key that names B's project with A's secret", async () => {
    // Prepare
    const { a, b, bRoomId } = tenants();
    const aSecret = a.apiKey.slice(`ck_${a.projectId}_`.length);

    // Act
    const response = await api(`/rooms/${bRoomId}`, { apiKey: `ck_${b.projectId}_${aSecret}` });

    // Assess
    expect(response).toMatchObject({ status: 401, body: { error: { code: 'invalid_api_key' } } });
  });
});
