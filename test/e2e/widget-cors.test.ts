import { beforeAll, describe, expect, it } from 'vitest';
import { corsAllowHeaders, corsAllowMethods, corsExposeHeaders, streamCorsAllowHeaders } from '../../lib/cors';
import { api, createTestProject, newUser, runtime, type TestProject, uniqueId } from '../support/api';

/**
 * CORS on the local gateway over real HTTP, as the deployed front doors answer it from the same
 * policy (`lib/cors.ts`): the shared runtime allows every origin (the deployments' default), so a
 * page anywhere may call the API, and what a site may do is the service's to refuse (the widget's
 * allowed origins, guest tokens bound to their origin).
 */

const SHOP = 'https://shop.example.com';
const STRANGER = 'https://stranger.example.org';
const lowerList = (names: readonly string[]) => names.map((name) => name.toLowerCase()).join(',');

let project: TestProject;
let roomId: string;

beforeAll(async () => {
  project = await createTestProject('widget-cors');
  const owner = await newUser(project, 'owner');
  roomId = uniqueId('room');
  await api('/rooms', { token: owner.token, body: { id: roomId, type: 'public' } });
  await api('/admin/widget', { method: 'PUT', apiKey: project.apiKey, body: { allowedOrigins: [SHOP], supportRoomId: null } });
});

const preflight = (path: string, method: string, requestHeaders: string) =>
  fetch(`${runtime().baseUrl}${path}`, {
    method: 'OPTIONS',
    headers: { origin: SHOP, 'access-control-request-method': method, 'access-control-request-headers': requestHeaders },
  });

describe('the preflight', () => {
  it("answers an HTTP API route with the HTTP API's methods and headers", async () => {
    // Act
    const answer = await preflight('/auth/guest', 'POST', 'content-type');

    // Assess
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(answer.headers.get('access-control-allow-methods')).toBe(corsAllowMethods.join(','));
    expect(answer.headers.get('access-control-allow-headers')).toBe(lowerList(corsAllowHeaders));
    expect(answer.headers.get('access-control-max-age')).toBe('86400');
  });

  it("answers the SSE stream's path with its function URL's rules: GET and the stream's headers", async () => {
    // Act
    const answer = await preflight(`/rooms/${roomId}/stream`, 'GET', 'authorization,last-event-id');

    // Assess
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBe('*');
    expect(answer.headers.get('access-control-allow-methods')).toBe('GET');
    expect(answer.headers.get('access-control-allow-headers')).toBe(lowerList(streamCorsAllowHeaders));
  });

  it('carries no CORS header without Origin and Access-Control-Request-Method, as API Gateway', async () => {
    // Act
    const answer = await fetch(`${runtime().baseUrl}/auth/guest`, { method: 'OPTIONS' });

    // Assess
    expect(answer.status).toBe(204);
    expect(answer.headers.get('access-control-allow-origin')).toBeNull();
  });
});

describe('answers to a page on another site', () => {
  it('carry the CORS headers on success and refusal alike, so the page can read why it was refused', async () => {
    // Act
    const allowed = await api('/auth/guest', { headers: { origin: SHOP }, body: { projectId: project.projectId } });
    const refused = await api('/auth/guest', { headers: { origin: STRANGER }, body: { projectId: project.projectId } });

    // Assess
    expect(allowed.status).toBe(201);
    expect(refused).toMatchObject({ status: 403, body: { error: { code: 'origin_not_allowed' } } });
    for (const answer of [allowed, refused]) {
      expect(answer.headers.get('access-control-allow-origin')).toBe('*');
      expect(answer.headers.get('access-control-expose-headers')).toBe(lowerList(corsExposeHeaders));
    }
  });

  it('carry them on the routes the SDK falls back to (SSE and polling), exposing Retry-After for its backoff', async () => {
    // Prepare
    const guest = (await api('/auth/guest', { headers: { origin: SHOP }, body: { projectId: project.projectId, roomId } })).body;
    const abort = new AbortController();

    // Act
    const stream = await fetch(`${runtime().baseUrl}/rooms/${roomId}/stream?token=${guest.token}`, {
      headers: { origin: SHOP },
      signal: abort.signal,
    });
    abort.abort();
    const poll = await api(`/rooms/${roomId}/messages?after=0`, { token: guest.token, headers: { origin: SHOP } });

    // Assess
    expect(stream.status).toBe(200);
    expect(stream.headers.get('access-control-allow-origin')).toBe('*');
    expect(poll.status).toBe(200);
    expect(poll.headers.get('access-control-allow-origin')).toBe('*');
    expect(poll.headers.get('access-control-expose-headers')?.split(',')).toContain('retry-after');
  });

  it("carry none without an Origin: a function's own CORS headers are dropped, as API Gateway ignores them", async () => {
    // Act: the SSE route's refusal sets `access-control-allow-origin: *` itself (functions/edge/stream.ts)
    const refused = await fetch(`${runtime().baseUrl}/rooms/${roomId}/stream`);
    const plain = await api(`/rooms/${roomId}`, { apiKey: project.apiKey });

    // Assess
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
    expect(plain.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('vary by Origin where an answer may be cached, so a same-origin copy never serves a page of another origin', async () => {
    // Act
    const flags = await fetch(`${runtime().baseUrl}/client/feature-flags`, { headers: { origin: SHOP } });

    // Assess
    expect(flags.headers.get('cache-control')).toContain('max-age');
    expect(flags.headers.get('vary')?.toLowerCase().split(/,\s*/)).toEqual(expect.arrayContaining(['authorization', 'origin']));
  });
});
