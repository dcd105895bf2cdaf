import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { bindingVariable } from '#wiring/bindings';
import { lambdaContext } from '../../lib/local/handlers';
import { type SecretsLocal, startSecretsLocal } from '../../lib/local/secrets-local';
import { api, createTestProject, newGroupRoom, type TestProject, uniqueId } from '../support/api';
import { invokeRoute } from '../support/in-process-route';
import { get } from '../support/raw-table';

/**
 * CloudFront's origin header, checked by the real handler modules of the shared runtime's tables
 * (in this process, events built by the local gateway's own builder): with the `origin-verify`
 * secret bound (the secrets stand-in serving `EDGE_ORIGIN_SECRET`'s value, as the local runtime
 * does when it is set), a request around CloudFront is refused with 403 `direct_access_forbidden`
 * before anything runs, and only one that came through it has its viewer address trusted.
 * Unbound, as on one machine and with `edge: false`, the header is ignored.
 */

const ORIGIN_SECRET = 'origin-verify-test-value-0123456789abcdefghijkl';
const LIMIT = 2;
let secrets: SecretsLocal;
let project: TestProject;

beforeAll(async () => {
  // The runtime's own signing key, so that tokens it issued verify against this stand-in too.
  const runtimeSecrets = new SecretsManagerClient({});
  const { SecretString: signingKey } = await runtimeSecrets.send(
    new GetSecretValueCommand({ SecretId: process.env[bindingVariable('secret:signing-key')] }),
  );
  runtimeSecrets.destroy();
  secrets = await startSecretsLocal({ 'origin-verify': ORIGIN_SECRET, 'signing-key': signingKey });
  project = await createTestProject('origin-guard');
});
afterEach(() => {
  vi.unstubAllEnvs();
});
afterAll(async () => {
  await secrets.stop();
});

/** The handler modules loaded afresh, with the origin secret bound (as where CloudFront stands in front) or not. */
async function handlers(bound: boolean) {
  vi.resetModules();
  vi.stubEnv('RATE_LIMIT_WEBHOOK_VERIFY_PER_MINUTE', String(LIMIT));
  vi.stubEnv('AWS_ENDPOINT_URL_SECRETS_MANAGER', secrets.endpoint);
  vi.stubEnv(bindingVariable('secret:signing-key'), secrets.arns['signing-key']);
  if (bound) vi.stubEnv(bindingVariable('secret:origin-verify'), secrets.arns['origin-verify']);
  else delete process.env[bindingVariable('secret:origin-verify')];
  const [createRoom, verifyWebhook, connect] = await Promise.all([
    import('../../functions/http/rooms/create-room'),
    import('../../functions/http/webhooks/verify-webhook'),
    import('../../functions/ws/connect'),
  ]);
  return { createRoom: createRoom.handler, verifyWebhook: verifyWebhook.handler, connect: connect.handler };
}

const apiKeyHeaders = () => ({ 'x-service-api-key': project.apiKey });
const unknownWebhook = { webhookId: 'wh_nobody_0123456789abcdef01234567', body: '{}', signature: 'sha256=00' };

describe('an HTTP API route with the origin-verify secret bound', () => {
  it('refuses a request without x-origin-verify or with a wrong one with 403 direct_access_forbidden, writing nothing', async () => {
    // Prepare
    const { createRoom } = await handlers(true);
    const [missingId, wrongId] = [uniqueId('direct'), uniqueId('forged')];

    // Act
    const missing = await invokeRoute(createRoom, 'CreateRoom', {
      headers: apiKeyHeaders(),
      body: { id: missingId, type: 'group' },
      socketAddress: '203.0.113.5',
    });
    const wrong = await invokeRoute(createRoom, 'CreateRoom', {
      headers: { ...apiKeyHeaders(), 'x-origin-verify': `${ORIGIN_SECRET.slice(0, -1)}X` },
      body: { id: wrongId, type: 'group' },
      socketAddress: '203.0.113.5',
    });

    // Assess
    expect(missing).toEqual({
      status: 403,
      body: { error: { code: 'direct_access_forbidden', message: expect.any(String), traceId: expect.any(String) } },
    });
    expect(wrong.status).toBe(403);
    expect(wrong.body.error.code).toBe('direct_access_forbidden');
    for (const roomId of [missingId, wrongId]) {
      expect((await api(`/rooms/${roomId}`, { apiKey: project.apiKey })).status).toBe(404);
    }
  });

  it('serves a request carrying the secret, and counts a per-IP limit on x-chat-viewer-address', async () => {
    // Prepare
    const { createRoom, verifyWebhook } = await handlers(true);
    const roomId = uniqueId('through-cloudfront');
    const cloudFront = '198.51.100.10';
    const [viewer, otherViewer] = [`2001:db8::${uniqueId('').slice(1, 5)}`, `192.0.2.${Math.floor(Math.random() * 250) + 1}`];
    const verify = (viewerAddress: string) =>
      invokeRoute(verifyWebhook, 'VerifyWebhook', {
        headers: { 'x-origin-verify': ORIGIN_SECRET, 'x-chat-viewer-address': viewerAddress },
        body: unknownWebhook,
        socketAddress: cloudFront,
      });

    // Act
    const created = await invokeRoute(createRoom, 'CreateRoom', {
      headers: { ...apiKeyHeaders(), 'x-origin-verify': ORIGIN_SECRET },
      body: { id: roomId, type: 'group' },
      socketAddress: cloudFront,
    });
    const statuses = [];
    for (let attempt = 0; attempt <= LIMIT; attempt++) statuses.push((await verify(viewer)).status);
    const another = await verify(otherViewer);

    // Assess
    expect(created.status).toBe(201);
    expect((await api(`/rooms/${roomId}`, { apiKey: project.apiKey })).status).toBe(200);
    expect(statuses.slice(0, LIMIT).every((status) => status !== 429)).toBe(true);
    expect(statuses[LIMIT]).toBe(429);
    expect(another.status).not.toBe(429);
  });

  it('counts on the socket address when x-chat-viewer-address is not one IP address', async () => {
    // Prepare
    const { verifyWebhook } = await handlers(true);
    const socketAddress = `198.51.100.${Math.floor(Math.random() * 250) + 1}`;
    const hostile = ['not-an-ip', '203.0.113.1, 203.0.113.2', '', `203.0.113.${Math.floor(Math.random() * 250) + 1}x`];

    // Act
    const statuses = [];
    for (const viewerAddress of [...hostile, ...hostile].slice(0, LIMIT + 1)) {
      statuses.push(
        (
          await invokeRoute(verifyWebhook, 'VerifyWebhook', {
            headers: { 'x-origin-verify': ORIGIN_SECRET, 'x-chat-viewer-address': viewerAddress },
            body: unknownWebhook,
            socketAddress,
          })
        ).status,
      );
    }

    // Assess
    expect(statuses[LIMIT]).toBe(429);
  });
});

describe('an HTTP API route without the binding (one machine, edge: false)', () => {
  it('checks no origin header and ignores x-chat-viewer-address: the limit counts the socket address', async () => {
    // Prepare
    const { verifyWebhook } = await handlers(false);
    const socketAddress = `203.0.113.${Math.floor(Math.random() * 250) + 1}`;

    // Act
    const statuses = [];
    for (let attempt = 0; attempt <= LIMIT; attempt++) {
      const answer = await invokeRoute(verifyWebhook, 'VerifyWebhook', {
        headers: { 'x-chat-viewer-address': `192.0.2.${attempt + 1}`, 'x-origin-verify': 'anything' },
        body: unknownWebhook,
        socketAddress,
      });
      statuses.push(answer.status);
    }

    // Assess
    expect(statuses[0]).not.toBe(403);
    expect(statuses.slice(0, LIMIT).every((status) => status !== 429)).toBe(true);
    expect(statuses[LIMIT]).toBe(429);
  });
});

describe('the WebSocket $connect', () => {
  const connectEvent = (connectionId: string, query: Record<string, string>, headers: Record<string, string>) => ({
    requestContext: {
      routeKey: '$connect',
      eventType: 'CONNECT',
      connectionId,
      requestId: uniqueId('request'),
      identity: { sourceIp: '198.51.100.10' },
    },
    queryStringParameters: query,
    headers,
    isBase64Encoded: false,
  });

  it('refuses the upgrade around CloudFront with 403 direct_access_forbidden, storing no connection, and lets the right header in', async () => {
    // Prepare
    const { connect } = await handlers(true);
    const { owner, roomId } = await newGroupRoom(project);
    const [missingId, wrongId, rightId] = [uniqueId('conn-direct'), uniqueId('conn-forged'), uniqueId('conn-edge')];
    const query = { roomId, token: owner.token, history: '0' };
    const open = async (connectionId: string, headers: Record<string, string>) => {
      const answer = (await connect(connectEvent(connectionId, query, headers) as never, lambdaContext('WsConnect'))) as {
        statusCode: number;
        body?: string;
      };
      return { status: answer.statusCode, code: answer.body ? JSON.parse(answer.body).error?.code : undefined };
    };

    // Act
    const missing = await open(missingId, {});
    const wrong = await open(wrongId, { 'X-Origin-Verify': 'not-the-secret' });
    const right = await open(rightId, { 'X-Origin-Verify': ORIGIN_SECRET });

    // Assess
    expect(missing).toEqual({ status: 403, code: 'direct_access_forbidden' });
    expect(wrong).toEqual({ status: 403, code: 'direct_access_forbidden' });
    expect(right.status).toBe(200);
    expect(await get(`CONN#${missingId}`, 'CONN')).toBeUndefined();
    expect(await get(`CONN#${wrongId}`, 'CONN')).toBeUndefined();
  });

  it('checks nothing without the binding', async () => {
    // Prepare
    const { connect } = await handlers(false);

    // Act
    const answer = (await connect(connectEvent(uniqueId('conn'), {}, {}) as never, lambdaContext('WsConnect'))) as {
      statusCode: number;
      body: string;
    };

    // Assess
    expect(answer.statusCode).toBe(401);
    expect(JSON.parse(answer.body).error.code).toBe('missing_credentials');
  });
});
