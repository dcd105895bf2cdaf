import { createPublicKey, type KeyObject, randomUUID } from 'node:crypto';
import { createSecureServer, type IncomingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose';
import { generate } from 'selfsigned';

/**
 * A local APNs on 127.0.0.1: HTTP/2 over TLS with a self-signed certificate (trusted by passing
 * `ca`, never by turning verification off), checking the provider token (ES256, kid, iss, at most
 * an hour old) and the topic as Apple does, and answering with Apple's status codes and reasons.
 */

export interface ApnsPush {
  readonly token: string;
  readonly headers: IncomingHttpHeaders;
  readonly payload: unknown;
}

export interface ApnsServer {
  /** `https://127.0.0.1:<port>`. */
  readonly url: string;
  /** The server's self-signed certificate (PEM): the only way a client may trust it. */
  readonly ca: string;
  /** Pushes accepted or answered with a token error (the provider token and topic were good). */
  readonly pushes: readonly ApnsPush[];
  /** Distinct provider tokens (JWTs) presented, valid or not. */
  readonly providerTokens: ReadonlySet<string>;
  /** Device tokens answered 410 Unregistered. */
  readonly unregisteredTokens: Set<string>;
  /** Device tokens answered 400 BadDeviceToken. */
  readonly badDeviceTokens: Set<string>;
  /** Device tokens whose push is never answered (a client timeout must cancel the stream). */
  readonly stalledTokens: Set<string>;
  /** Streams the client cancelled (RST_STREAM CANCEL) before an answer. */
  readonly cancelledStreams: number;
  /** HTTP/2 connections accepted. */
  readonly connections: number;
  /** Closes every open connection (GOAWAY), as APNs does to idle or old ones. */
  dropConnections(): void;
  /** Treats every provider token seen so far as older than an hour: 403 ExpiredProviderToken from now on. */
  expireProviderTokensSeen(): void;
  close(): Promise<void>;
}

export interface ApnsServerOptions {
  readonly teamId: string;
  readonly keyId: string;
  /** The public half of the `.p8` key (a KeyObject or SPKI PEM). */
  readonly publicKey: KeyObject | string;
  readonly bundleId: string;
}

export async function startApnsServer(options: ApnsServerOptions): Promise<ApnsServer> {
  const publicKey = typeof options.publicKey === 'string' ? createPublicKey(options.publicKey) : options.publicKey;
  const certificate = await generate([{ name: 'commonName', value: 'localhost' }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
  });
  const pushes: ApnsPush[] = [];
  const providerTokens = new Set<string>();
  const expiredTokens = new Set<string>();
  const unregisteredTokens = new Set<string>();
  const badDeviceTokens = new Set<string>();
  const stalledTokens = new Set<string>();
  const sessions = new Set<ServerHttp2Session>();
  let cancelledStreams = 0;
  let connections = 0;

  const answer = (stream: ServerHttp2Stream, status: number, body?: Record<string, unknown>) => {
    const headers = { ':status': status, 'apns-id': randomUUID().toUpperCase() };
    if (!body) return stream.respond(headers, { endStream: true });
    stream.respond({ ...headers, 'content-type': 'application/json' });
    stream.end(JSON.stringify(body));
  };

  /** Apple's provider-token checks; the reason to refuse with, or `undefined` when the token is good. */
  async function providerTokenProblem(authorization: string | undefined): Promise<string | undefined> {
    const jwt = /^bearer (.+)$/.exec(authorization ?? '')?.[1];
    if (!jwt) return 'MissingProviderToken';
    providerTokens.add(jwt);
    if (expiredTokens.has(jwt)) return 'ExpiredProviderToken';
    try {
      if (decodeProtectedHeader(jwt).kid !== options.keyId) return 'InvalidProviderToken';
      await jwtVerify(jwt, publicKey, { algorithms: ['ES256'], issuer: options.teamId, requiredClaims: ['iat'], maxTokenAge: '1h' });
      return undefined;
    } catch (error) {
      return error instanceof joseErrors.JWTExpired ? 'ExpiredProviderToken' : 'InvalidProviderToken';
    }
  }

  async function handle(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, body: Buffer): Promise<void> {
    if (headers[':method'] !== 'POST') return answer(stream, 405, { reason: 'MethodNotAllowed' });
    const path = /^\/3\/device\/([^/?]+)$/.exec(headers[':path'] ?? '');
    if (!path) return answer(stream, 404, { reason: 'BadPath' });
    const token = decodeURIComponent(path[1] as string);
    const problem = await providerTokenProblem(headers.authorization);
    if (problem) return answer(stream, 403, { reason: problem });
    if (!headers['apns-topic']) return answer(stream, 400, { reason: 'MissingTopic' });
    if (headers['apns-topic'] !== options.bundleId) return answer(stream, 400, { reason: 'DeviceTokenNotForTopic' });
    let payload: unknown;
    try {
      payload = JSON.parse(body.toString('utf8'));
    } catch {
      return answer(stream, 400, { reason: 'PayloadEmpty' });
    }
    pushes.push({ token, headers, payload });
    if (stalledTokens.has(token)) return;
    if (unregisteredTokens.has(token)) return answer(stream, 410, { reason: 'Unregistered', timestamp: Date.now() });
    if (badDeviceTokens.has(token)) return answer(stream, 400, { reason: 'BadDeviceToken' });
    answer(stream, 200);
  }

  const server = createSecureServer({ key: certificate.private, cert: certificate.cert });
  server.on('session', (session) => {
    sessions.add(session);
    connections += 1;
    session.on('close', () => sessions.delete(session));
    session.on('error', () => {});
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    stream.on('close', () => {
      if (!stream.headersSent && stream.rstCode !== 0) cancelledStreams += 1;
    });
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      handle(stream, headers, Buffer.concat(chunks)).catch(() => {
        if (!stream.destroyed && !stream.headersSent) answer(stream, 500, { reason: 'InternalServerError' });
      });
    });
  });
  // A client that refuses the certificate aborts the handshake; that is the test's point, not a server failure.
  server.on('tlsClientError', () => {});
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    ca: certificate.cert,
    pushes,
    providerTokens,
    unregisteredTokens,
    badDeviceTokens,
    stalledTokens,
    get cancelledStreams() {
      return cancelledStreams;
    },
    get connections() {
      return connections;
    },
    dropConnections: () => {
      for (const session of sessions) session.close();
    },
    expireProviderTokensSeen: () => {
      for (const jwt of providerTokens) expiredTokens.add(jwt);
    },
    close: async () => {
      for (const session of sessions) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
