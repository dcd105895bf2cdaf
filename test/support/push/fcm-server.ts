import { createPublicKey, type KeyObject, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { jwtVerify } from 'jose';

/**
 * A local FCM on 127.0.0.1 speaking what `functions/shared/providers/fcm.ts` talks to: Google's
 * OAuth 2.0 token endpoint (JWT bearer grant, the assertion verified against the service account's
 * public key), the HTTP v1 send and the legacy send, with their real answers for dead tokens.
 * Point `FCM_BASE_URL` and `GOOGLE_OAUTH_BASE_URL` at `url`.
 */

const FCM_SCOPE = 'https://www.googleapis.com/auth/firebase.messaging';

export interface FcmV1Send {
  readonly projectId: string;
  readonly accessToken: string;
  readonly message: { token?: string; notification?: { title?: string; body?: string }; data?: Record<string, string> };
}

export interface FcmLegacySend {
  readonly serverKey: string;
  readonly body: { to?: string; notification?: { title?: string; body?: string }; data?: Record<string, string> };
}

export interface FcmServer {
  /** `http://127.0.0.1:<port>`: the base URL of FCM and of the token endpoint alike. */
  readonly url: string;
  /** Token requests received, granted or not. */
  readonly tokenRequests: number;
  /** Access tokens granted, in order. */
  readonly issuedTokens: readonly string[];
  readonly v1Sends: readonly FcmV1Send[];
  readonly legacySends: readonly FcmLegacySend[];
  /** Tokens answered as uninstalled apps (v1: 404 UNREGISTERED; legacy: NotRegistered). */
  readonly deadTokens: Set<string>;
  /** Tokens that were never valid (v1: 400 INVALID_ARGUMENT on `message.token`; legacy: InvalidRegistration). */
  readonly invalidTokens: Set<string>;
  /** Makes every access token granted so far unknown, as after revocation: the next v1 send with one gets 401. */
  revokeAccessTokens(): void;
  /** Resolves once `predicate` holds, polling; rejects after `timeoutMs`. */
  waitFor(predicate: (server: FcmServer) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export interface FcmServerOptions {
  /** The service account's public key (a KeyObject or SPKI PEM); without it every token request is refused. */
  readonly serviceAccountPublicKey?: KeyObject | string;
  /** Legacy server keys accepted by `/fcm/send`. */
  readonly legacyKeys?: readonly string[];
}

export async function startFcmServer(options: FcmServerOptions = {}): Promise<FcmServer> {
  const publicKey =
    typeof options.serviceAccountPublicKey === 'string'
      ? createPublicKey(options.serviceAccountPublicKey)
      : options.serviceAccountPublicKey;
  const legacyKeys = new Set(options.legacyKeys ?? []);
  const validTokens = new Set<string>();
  const issuedTokens: string[] = [];
  const v1Sends: FcmV1Send[] = [];
  const legacySends: FcmLegacySend[] = [];
  let tokenRequests = 0;
  let url = '';

  const json = (response: ServerResponse, status: number, body: unknown): void => {
    response.writeHead(status, { 'content-type': 'application/json; charset=UTF-8' }).end(JSON.stringify(body));
  };

  async function grantToken(body: string, response: ServerResponse) {
    tokenRequests += 1;
    const form = new URLSearchParams(body);
    const assertion = form.get('assertion');
    if (form.get('grant_type') !== 'urn:ietf:params:oauth:grant-type:jwt-bearer' || !assertion || !publicKey)
      return json(response, 400, { error: 'invalid_grant', error_description: 'Invalid grant: account not found' });
    try {
      const { payload } = await jwtVerify(assertion, publicKey, {
        algorithms: ['RS256'],
        audience: `${url}/token`,
        requiredClaims: ['iss', 'scope', 'iat', 'exp'],
      });
      if (typeof payload.scope !== 'string' || !payload.scope.split(' ').includes(FCM_SCOPE)) throw new Error('scope');
    } catch {
      return json(response, 400, { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' });
    }
    const accessToken = `ya29.${randomBytes(24).toString('base64url')}`;
    validTokens.add(accessToken);
    issuedTokens.push(accessToken);
    json(response, 200, { access_token: accessToken, expires_in: 3600, token_type: 'Bearer' });
  }

  function sendV1(request: IncomingMessage, projectId: string, body: string, response: ServerResponse) {
    const accessToken = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
    if (!accessToken || !validTokens.has(accessToken)) {
      return json(response, 401, {
        error: {
          code: 401,
          message: 'Request had invalid authentication credentials. Expected OAuth 2 access token.',
          status: 'UNAUTHENTICATED',
        },
      });
    }
    const parsed = parseJson(body) as { message?: FcmV1Send['message'] } | undefined;
    if (!parsed)
      return json(response, 400, { error: { code: 400, message: 'Invalid JSON payload received.', status: 'INVALID_ARGUMENT' } });
    const message = parsed.message ?? {};
    const badDataIndex = Object.values(message.data ?? {}).findIndex((value) => typeof value !== 'string');
    const badField =
      !message.token || invalidTokens.has(message.token)
        ? 'message.token'
        : badDataIndex === -1
          ? undefined
          : `message.data[${badDataIndex}].value`;
    if (badField) {
      // What FCM answers for a token that was never valid, and for a `data` value that is not a string.
      return json(response, 400, {
        error: {
          code: 400,
          message:
            badField === 'message.token'
              ? 'The registration token is not a valid FCM registration token'
              : `Invalid value at '${badField}'`,
          status: 'INVALID_ARGUMENT',
          details: [
            { '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'INVALID_ARGUMENT' },
            { '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: [{ field: badField, description: 'Invalid value' }] },
          ],
        },
      });
    }
    v1Sends.push({ projectId, accessToken, message });
    if (deadTokens.has(message.token as string)) {
      return json(response, 404, {
        error: {
          code: 404,
          message: 'Requested entity was not found.',
          status: 'NOT_FOUND',
          details: [{ '@type': 'type.googleapis.com/google.firebase.fcm.v1.FcmError', errorCode: 'UNREGISTERED' }],
        },
      });
    }
    json(response, 200, { name: `projects/${projectId}/messages/0:${Date.now()}%${randomBytes(8).toString('hex')}` });
  }

  function sendLegacy(request: IncomingMessage, body: string, response: ServerResponse) {
    const serverKey = /^key=(.+)$/.exec(request.headers.authorization ?? '')?.[1];
    // The real endpoint answers a bad key with an HTML page.
    if (!serverKey || !legacyKeys.has(serverKey))
      return void response.writeHead(401, { 'content-type': 'text/html' }).end('<HTML><TITLE>Unauthorized</TITLE></HTML>');
    const message = parseJson(body) as FcmLegacySend['body'] | undefined;
    if (!message) return void response.writeHead(400, { 'content-type': 'text/plain' }).end('JSON_PARSING_ERROR');
    legacySends.push({ serverKey, body: message });
    const multicast_id = Number.parseInt(randomBytes(6).toString('hex'), 16);
    const error =
      !message.to || invalidTokens.has(message.to) ? 'InvalidRegistration' : deadTokens.has(message.to) ? 'NotRegistered' : undefined;
    if (error) return json(response, 200, { multicast_id, success: 0, failure: 1, canonical_ids: 0, results: [{ error }] });
    json(response, 200, { multicast_id, success: 1, failure: 0, canonical_ids: 0, results: [{ message_id: `0:${Date.now()}` }] });
  }

  const deadTokens = new Set<string>();
  const invalidTokens = new Set<string>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = new URL(request.url ?? '/', url).pathname;
      const v1 = /^\/v1\/projects\/([^/]+)\/messages:send$/.exec(path);
      if (request.method !== 'POST') return json(response, 405, { error: { code: 405, status: 'METHOD_NOT_ALLOWED' } });
      if (path === '/token') return void grantToken(body, response).catch(() => json(response, 500, { error: 'internal_failure' }));
      if (v1) return sendV1(request, decodeURIComponent(v1[1] as string), body, response);
      if (path === '/fcm/send') return sendLegacy(request, body, response);
      json(response, 404, { error: { code: 404, message: 'Not found', status: 'NOT_FOUND' } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const state: FcmServer = {
    url,
    get tokenRequests() {
      return tokenRequests;
    },
    issuedTokens,
    v1Sends,
    legacySends,
    deadTokens,
    invalidTokens,
    revokeAccessTokens: () => validTokens.clear(),
    waitFor: async (predicate, timeoutMs = 5000) => {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(state)) {
        if (Date.now() > deadline) throw new Error(`the FCM server did not reach the expected state within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return state;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
