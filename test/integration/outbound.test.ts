import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import {
  createServer as createHttp2Server,
  constants as http2Constants,
  type IncomingHttpHeaders,
  type ServerHttp2Session,
  type ServerHttp2Stream,
} from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { GuardOptions } from '#shared/outbound-guard';

/**
 * `functions/shared/outbound.ts` against real HTTP/1.1 and HTTP/2 servers on 127.0.0.1: timeouts,
 * redirects left alone, the size cap, connection and session reuse, and the SSRF guard on user URLs
 * next to trusted provider URLs. The module is loaded with the AWS setting (`WEBHOOK_ALLOW_PRIVATE_TARGETS=false`, read at
 * import), so loopback is refused for user URLs unless a case allows it explicitly.
 */

type Outbound = typeof import('#shared/outbound');
let outbound: Outbound;

interface TestServer {
  readonly url: string;
  readonly port: number;
  /** Requests received, with their bodies. */
  readonly requests: { method: string; path: string; body: Buffer }[];
  /** TCP connections accepted. */
  connections: number;
  close(): Promise<void>;
}

const servers: TestServer[] = [];

async function startServer(answer: (request: IncomingMessage, response: ServerResponse) => void): Promise<TestServer> {
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      state.requests.push({ method: request.method ?? '', path: request.url ?? '', body: Buffer.concat(chunks) });
      answer(request, response);
    });
  });
  server.on('connection', () => {
    state.connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const state: TestServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    requests: [],
    connections: 0,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  servers.push(state);
  return state;
}

/** The rejection of a call, so a case can assert its code and message. */
async function failureOf(call: Promise<unknown>): Promise<{ code: string; message: string; status?: number }> {
  try {
    await call;
  } catch (error) {
    return error as { code: string; message: string; status?: number };
  }
  throw new Error('the call succeeded');
}

/** A resolver that answers loopback for any name, as a rebinding DNS server would after registration. */
const answerLoopback: GuardOptions['resolve'] = (_hostname, _options, callback) => callback(null, [{ address: '127.0.0.1', family: 4 }]);

const ok =
  (body = 'ok') =>
  (_request: IncomingMessage, response: ServerResponse) =>
    response.writeHead(200).end(body);

beforeAll(async () => {
  vi.resetModules();
  vi.stubEnv('WEBHOOK_ALLOW_PRIVATE_TARGETS', 'false');
  outbound = await import('#shared/outbound');
  vi.unstubAllEnvs();
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

afterAll(() => {
  vi.resetModules();
});

describe('send to a provider URL', () => {
  it('reaches loopback although private targets are not allowed, and returns status, headers and body', async () => {
    // Prepare
    const server = await startServer((_request, response) => response.writeHead(201, { 'x-answer': 'yes' }).end('créé'));

    // Act
    const response = await outbound.send({
      target: 'provider',
      method: 'POST',
      url: `${server.url}/v1/send`,
      headers: { 'content-type': 'text/plain' },
      body: 'héllo',
    });

    // Assess
    expect(response.status).toBe(201);
    expect(response.headers['x-answer']).toBe('yes');
    expect(response.body.toString('utf8')).toBe('créé');
    expect(server.requests).toEqual([{ method: 'POST', path: '/v1/send', body: Buffer.from('héllo', 'utf8') }]);
  });

  it('answers a connection refused with a network error naming ECONNREFUSED', async () => {
    // Prepare
    const server = await startServer(ok());
    const { url } = server;
    await server.close();

    // Act
    const error = await failureOf(outbound.send({ target: 'provider', url }));

    // Assess
    expect(error.code).toBe('network');
    expect(error.message).toMatch(/^ECONNREFUSED/);
  });
});

describe('the timeout', () => {
  it.each([
    { case: 'never answers', answer: () => undefined, status: undefined },
    {
      case: 'trickles its body a byte at a time',
      answer: (_request: IncomingMessage, response: ServerResponse) => {
        response.writeHead(200);
        const drip = setInterval(() => response.write('.'), 20);
        response.on('close', () => clearInterval(drip));
      },
      status: 200,
    },
  ])('ends a call to a server that $case at the whole-answer deadline', async ({ answer, status }) => {
    // Prepare
    const server = await startServer(answer);
    const started = Date.now();

    // Act
    const error = await failureOf(outbound.send({ target: 'provider', url: server.url, timeoutMs: 300 }));

    // Assess
    const elapsed = Date.now() - started;
    expect(error).toMatchObject({ code: 'timeout', message: 'timed out after 300 ms', status });
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(2000);
  });
});

describe('redirects', () => {
  it.each([301, 302, 307, 308])('a %i is returned as it is; the Location target sees no request', async (status) => {
    // Prepare
    const target = await startServer(ok());
    const redirector = await startServer((_request, response) => response.writeHead(status, { location: `${target.url}/elsewhere` }).end());

    // Act
    const response = await outbound.send({ target: 'provider', method: 'POST', url: `${redirector.url}/hook`, body: '{}' });

    // Assess
    expect(response.status).toBe(status);
    expect(response.headers.location).toBe(`${target.url}/elsewhere`);
    expect(redirector.requests).toHaveLength(1);
    expect(target.requests).toHaveLength(0);
  });
});

describe('the response size cap', () => {
  const bytes = (count: number) => Buffer.alloc(count, 'x');

  it.each([
    {
      case: 'declared by content-length',
      answer: (_request: IncomingMessage, response: ServerResponse) => response.writeHead(200, { 'content-length': 2048 }).end(bytes(2048)),
    },
    {
      case: 'chunked, without a length',
      answer: (_request: IncomingMessage, response: ServerResponse) => {
        response.writeHead(200);
        for (let chunk = 0; chunk < 4; chunk += 1) response.write(bytes(512));
        response.end();
      },
    },
  ])('refuses a bigger answer ($case) and drops its connection', async ({ answer }) => {
    // Prepare
    const server = await startServer((request, response) =>
      request.url === '/small' ? ok()(request, response) : answer(request, response),
    );

    // Act
    const error = await failureOf(outbound.send({ target: 'provider', url: `${server.url}/big`, maxResponseBytes: 1024 }));
    const next = await outbound.send({ target: 'provider', url: `${server.url}/small`, maxResponseBytes: 1024 });

    // Assess
    expect(error).toMatchObject({ code: 'response_too_large', status: 200, message: 'the answer is larger than 1024 bytes' });
    expect(next.status).toBe(200);
    expect(server.connections).toBe(2);
  });

  it('accepts an answer of exactly the cap', async () => {
    // Prepare
    const server = await startServer((_request, response) => response.writeHead(200).end(bytes(1024)));

    // Act
    const response = await outbound.send({ target: 'provider', url: server.url, maxResponseBytes: 1024 });

    // Assess
    expect(response.body.length).toBe(1024);
  });
});

describe('keep-alive', () => {
  it.each([
    { target: 'provider' as const, guard: {} },
    { target: 'user' as const, guard: { allowPrivate: true } },
  ])('reuses one connection for consecutive $target calls', async ({ target, guard }) => {
    // Prepare
    const server = await startServer(ok());

    // Act
    for (let call = 0; call < 3; call += 1) await outbound.send({ target, url: `${server.url}/${call}` }, guard);

    // Assess
    expect(server.requests.map((request) => request.path)).toEqual(['/0', '/1', '/2']);
    expect(server.connections).toBe(1);
  });

  it('never hands a provider connection to a user URL', async () => {
    // Prepare
    const server = await startServer(ok());
    await outbound.send({ target: 'provider', url: server.url });

    // Act
    await outbound.send({ target: 'user', url: server.url }, { allowPrivate: true });

    // Assess
    expect(server.requests).toHaveLength(2);
    expect(server.connections).toBe(2);
  });
});

describe('send to a user URL', () => {
  it.each([
    { case: 'a loopback literal', host: () => '127.0.0.1', message: '127.0.0.1 is a private address' },
    { case: 'localhost by name', host: () => 'localhost', message: 'localhost is a private address' },
    { case: 'a *.localhost name with a trailing dot', host: () => 'a.localhost.', message: 'a.localhost. is a private address' },
  ])('refuses $case before connecting when private targets are not allowed (the setting)', async ({ host, message }) => {
    // Prepare
    const server = await startServer(ok());

    // Act
    const error = await failureOf(
      outbound.send({ target: 'user', method: 'POST', url: `http://${host()}:${server.port}/hook`, body: '{}' }),
    );

    // Assess
    expect(error).toMatchObject({ code: 'private_address', message });
    expect(server.connections).toBe(0);
  });

  it('refuses at connect time a public-looking name that resolves to loopback', async () => {
    // Prepare
    const server = await startServer(ok());

    // Act
    const error = await failureOf(
      outbound.send({ target: 'user', url: `http://hooks.example.com:${server.port}/hook` }, { resolve: answerLoopback }),
    );

    // Assess
    expect(error).toMatchObject({ code: 'private_address', message: 'hooks.example.com resolves to a private address' });
    expect(server.connections).toBe(0);
  });

  it('connects to the address the guarded resolver answered when private targets are allowed', async () => {
    // Prepare
    const server = await startServer(ok('reached'));

    // Act
    const response = await outbound.send(
      { target: 'user', url: `http://hooks.example.com:${server.port}/hook` },
      { allowPrivate: true, resolve: answerLoopback },
    );

    // Assess
    expect(response.body.toString()).toBe('reached');
    expect(server.requests).toHaveLength(1);
  });

  it.each([['ftp://hooks.example.com/hook'], ['not a url']])('refuses %s as an invalid request', async (url) => {
    // Act
    const error = await failureOf(outbound.send({ target: 'user', url }));

    // Assess
    expect(error.code).toBe('invalid_request');
  });
});

interface Http2TestServer {
  readonly url: string;
  readonly port: number;
  /** Paths of the requests received, in order. */
  readonly paths: string[];
  /** The requests received, headers and body. */
  readonly requests: { headers: IncomingHttpHeaders; body: Buffer }[];
  /** HTTP/2 sessions (connections) accepted. */
  sessions: number;
  /** Streams the client cancelled (RST_STREAM CANCEL) before the server answered or finished. */
  cancelledStreams: number;
  /** Closes every open session with a GOAWAY, as a server does to idle or old connections. */
  dropSessions(): void;
  close(): Promise<void>;
}

const http2Servers: Http2TestServer[] = [];

/** A cleartext HTTP/2 server (h2c, prior knowledge) on 127.0.0.1 counting its sessions and cancelled streams. */
async function startHttp2Server(answer: (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => void): Promise<Http2TestServer> {
  const server = createHttp2Server();
  const open = new Set<ServerHttp2Session>();
  server.on('session', (session) => {
    state.sessions += 1;
    open.add(session);
    session.on('close', () => open.delete(session));
    session.on('error', () => {});
  });
  server.on('stream', (stream, headers) => {
    stream.on('error', () => {});
    stream.on('close', () => {
      if (stream.rstCode === http2Constants.NGHTTP2_CANCEL) state.cancelledStreams += 1;
    });
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      state.paths.push(String(headers[':path']));
      state.requests.push({ headers, body: Buffer.concat(chunks) });
      answer(stream, headers);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const state: Http2TestServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    paths: [],
    requests: [],
    sessions: 0,
    cancelledStreams: 0,
    dropSessions: () => {
      for (const session of open) session.close();
    },
    close: async () => {
      for (const session of open) session.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  http2Servers.push(state);
  return state;
}

const answer2 =
  (status = 200, body = 'ok') =>
  (stream: ServerHttp2Stream) => {
    stream.respond({ ':status': status });
    stream.end(body);
  };

/** Waits until `check` holds, for effects the server sees a moment after the client settled. */
async function eventually(check: () => boolean): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('HTTP/2', () => {
  afterEach(async () => {
    await Promise.all(http2Servers.splice(0).map((server) => server.close()));
  });

  it('sends the method, path, headers and body and returns status, headers and body', async () => {
    // Prepare
    const server = await startHttp2Server((stream) => {
      stream.respond({ ':status': 201, 'x-answer': 'yes' });
      stream.end('créé');
    });

    // Act
    const response = await outbound.send({
      target: 'provider',
      protocol: 'http2',
      method: 'POST',
      url: `${server.url}/3/device/aa?x=1`,
      headers: { 'content-type': 'text/plain' },
      body: 'héllo',
    });

    // Assess
    expect(response.status).toBe(201);
    expect(response.headers['x-answer']).toBe('yes');
    expect(response.body.toString('utf8')).toBe('créé');
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.headers).toMatchObject({ ':method': 'POST', ':path': '/3/device/aa?x=1', 'content-type': 'text/plain' });
    expect(server.requests[0]?.body.toString('utf8')).toBe('héllo');
  });

  it.each([
    { case: 'never answers', answer: () => undefined, status: undefined },
    {
      case: 'trickles its body a byte at a time',
      answer: (stream: ServerHttp2Stream) => {
        stream.respond({ ':status': 200 });
        const drip = setInterval(() => stream.write('.'), 20);
        stream.on('close', () => clearInterval(drip));
      },
      status: 200,
    },
  ])('ends a call to a server that $case at the whole-answer deadline, cancelling the stream only', async ({ answer, status }) => {
    // Prepare
    const server = await startHttp2Server(answer);
    const started = Date.now();

    // Act
    const error = await failureOf(outbound.send({ target: 'provider', protocol: 'http2', url: `${server.url}/slow`, timeoutMs: 300 }));
    const elapsed = Date.now() - started;
    const next = await outbound
      .send({ target: 'provider', protocol: 'http2', url: `${server.url}/slow`, timeoutMs: 300 })
      .catch(() => undefined);

    // Assess
    expect(error).toMatchObject({ code: 'timeout', message: 'timed out after 300 ms', status });
    expect(elapsed).toBeGreaterThanOrEqual(290);
    expect(elapsed).toBeLessThan(2000);
    await eventually(() => server.cancelledStreams >= 2);
    expect(server.cancelledStreams).toBe(2);
    expect(next).toBeUndefined();
    expect(server.sessions).toBe(1);
  });

  describe('the response size cap', () => {
    const bytes = (count: number) => Buffer.alloc(count, 'x');

    it.each([
      {
        case: 'declared by content-length',
        answer: (stream: ServerHttp2Stream) => {
          stream.respond({ ':status': 200, 'content-length': 2048 });
          stream.end(bytes(2048));
        },
      },
      {
        case: 'streamed, without a length',
        answer: (stream: ServerHttp2Stream) => {
          stream.respond({ ':status': 200 });
          for (let chunk = 0; chunk < 4; chunk += 1) stream.write(bytes(512));
          stream.end();
        },
      },
    ])('refuses a bigger answer ($case), and the session serves the next call', async ({ answer }) => {
      // Prepare
      const server = await startHttp2Server((stream, headers) => (headers[':path'] === '/small' ? answer2()(stream) : answer(stream)));

      // Act
      const error = await failureOf(
        outbound.send({ target: 'provider', protocol: 'http2', url: `${server.url}/big`, maxResponseBytes: 1024 }),
      );
      const next = await outbound.send({ target: 'provider', protocol: 'http2', url: `${server.url}/small`, maxResponseBytes: 1024 });

      // Assess
      expect(error).toMatchObject({ code: 'response_too_large', status: 200, message: 'the answer is larger than 1024 bytes' });
      expect(next.status).toBe(200);
      expect(server.sessions).toBe(1);
    });

    it('accepts an answer of exactly the cap', async () => {
      // Prepare
      const server = await startHttp2Server((stream) => {
        stream.respond({ ':status': 200 });
        stream.end(bytes(1024));
      });

      // Act
      const response = await outbound.send({ target: 'provider', protocol: 'http2', url: server.url, maxResponseBytes: 1024 });

      // Assess
      expect(response.body.length).toBe(1024);
    });
  });

  it('returns a redirect as it is; the Location target sees no request', async () => {
    // Prepare
    const target = await startHttp2Server(answer2());
    const redirector = await startHttp2Server((stream) => {
      stream.respond({ ':status': 307, location: `${target.url}/elsewhere` });
      stream.end();
    });

    // Act
    const response = await outbound.send({
      target: 'provider',
      protocol: 'http2',
      method: 'POST',
      url: `${redirector.url}/hook`,
      body: '{}',
    });

    // Assess
    expect(response.status).toBe(307);
    expect(response.headers.location).toBe(`${target.url}/elsewhere`);
    expect(target.paths).toEqual([]);
  });

  describe('sessions', () => {
    it('sends consecutive and concurrent calls on one session', async () => {
      // Prepare
      const server = await startHttp2Server(answer2());

      // Act
      await outbound.send({ target: 'provider', protocol: 'http2', url: `${server.url}/0` });
      await Promise.all([1, 2, 3, 4].map((call) => outbound.send({ target: 'provider', protocol: 'http2', url: `${server.url}/${call}` })));
      await outbound.send({ target: 'provider', protocol: 'http2', url: `${server.url}/5` });

      // Assess
      expect([...server.paths].sort()).toEqual(['/0', '/1', '/2', '/3', '/4', '/5']);
      expect(server.sessions).toBe(1);
    });

    it('never hands a provider session to a user URL', async () => {
      // Prepare
      const server = await startHttp2Server(answer2());
      await outbound.send({ target: 'provider', protocol: 'http2', url: server.url });

      // Act
      await outbound.send({ target: 'user', protocol: 'http2', url: server.url }, { allowPrivate: true });
      await outbound.send({ target: 'user', protocol: 'http2', url: server.url }, { allowPrivate: true });

      // Assess
      expect(server.paths).toHaveLength(3);
      expect(server.sessions).toBe(2);
    });

    it('opens a new session after the server closed the old one', async () => {
      // Prepare
      const server = await startHttp2Server(answer2());
      await outbound.send({ target: 'provider', protocol: 'http2', url: `${server.url}/before` });
      server.dropSessions();

      // Act
      const response = await outbound.send({ target: 'provider', protocol: 'http2', url: `${server.url}/after` });

      // Assess
      expect(response.status).toBe(200);
      expect(server.paths).toEqual(['/before', '/after']);
      expect(server.sessions).toBe(2);
    });

    it('answers a connection refused with a network error naming ECONNREFUSED', async () => {
      // Prepare
      const server = await startHttp2Server(answer2());
      const { url } = server;
      await server.close();

      // Act
      const error = await failureOf(outbound.send({ target: 'provider', protocol: 'http2', url }));

      // Assess
      expect(error.code).toBe('network');
      expect(error.message).toMatch(/^ECONNREFUSED/);
    });
  });

  describe('to a user URL', () => {
    it('refuses a loopback literal before connecting when private targets are not allowed', async () => {
      // Prepare
      const server = await startHttp2Server(answer2());

      // Act
      const error = await failureOf(outbound.send({ target: 'user', protocol: 'http2', url: server.url }));

      // Assess
      expect(error).toMatchObject({ code: 'private_address', message: '127.0.0.1 is a private address' });
      expect(server.sessions).toBe(0);
    });

    it('refuses at connect time a public-looking name that resolves to loopback', async () => {
      // Prepare
      const server = await startHttp2Server(answer2());

      // Act
      const error = await failureOf(
        outbound.send(
          { target: 'user', protocol: 'http2', url: `http://push.example.com:${server.port}/sub` },
          { resolve: answerLoopback },
        ),
      );

      // Assess
      expect(error).toMatchObject({ code: 'private_address', message: 'push.example.com resolves to a private address' });
      expect(server.sessions).toBe(0);
    });
  });
});
