/**
 * The realtime bench's baselines: a plain `ws` broadcast server (the physical limit) and Soketi, an
 * off-the-shelf Pusher-protocol server (opt-in).
 */
import { createHmac } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type WebSocket, WebSocketServer } from 'ws';
import { freePort } from '../../lib/local/free-port';
import { launch, sleep, versionOf } from '../util';
import { SOKETI_DIR, soketiServerScript } from './soketi-install';

/**
 * The least a WebSocket fan-out can do: a bare `ws` server whose rooms are URL paths
 * (`/rooms/<roomId>`); every frame a client sends goes, unchanged, to every other open client of
 * its room. No auth, no parsing, no storage: the limit of one Node process writing frames to
 * sockets on this machine.
 */
export async function startPlainWsServer() {
  const rooms = new Map<string, Set<WebSocket>>();
  const server = createServer((_request, response) => response.writeHead(426).end());
  const wss = new WebSocketServer({ server, perMessageDeflate: false });
  wss.on('connection', (socket, request) => {
    const roomId = /^\/rooms\/([^/?]+)/.exec(request.url ?? '')?.[1];
    if (!roomId) {
      socket.close(1008, 'no room');
      return;
    }
    const room = rooms.get(roomId) ?? new Set();
    rooms.set(roomId, room);
    room.add(socket);
    socket.on('message', (data, isBinary) => {
      for (const other of room) if (other !== socket && other.readyState === other.OPEN) other.send(data, { binary: isBinary });
    });
    socket.on('close', () => {
      room.delete(socket);
      if (room.size === 0) rooms.delete(roomId);
    });
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  return {
    /** A room is `${url}/rooms/<roomId>`. */
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async stop() {
      for (const client of wss.clients) client.terminate();
      await new Promise((resolve) => wss.close(resolve));
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Pusher channel authorization: `key:HMAC-SHA256(secret, "socket_id:channel")` (private channels). */
export const signChannel = (appKey: string, appSecret: string, socketId: string, channel: string) =>
  `${appKey}:${createHmac('sha256', appSecret).update(`${socketId}:${channel}`).digest('hex')}`;

/** A UDP port nobody holds on loopback, for Soketi's cluster discovery (node-discover). */
const freeUdpPort = () =>
  new Promise<number>((resolve, reject) => {
    const socket = createSocket('udp4');
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      const { port } = socket.address();
      socket.close(() => resolve(port));
    });
  });

/**
 * Starts `soketi start` from `@soketi/soketi`, as installed in bench/soketi (`ensureSoketiInstalled`),
 * as a child process bound to loopback, with one app whose client events are on and whose rate limits are off. Settings go in
 * as the `SOKETI_*` variables its CLI reads (`dist/cli/cli.js`), plus a config file for the one
 * setting that has no variable: `cluster.address`, the address node-discover binds its UDP socket to
 * (0.0.0.0 otherwise). Discovery is unicast to 127.0.0.1 only, never broadcast. The working folder
 * is an empty temporary one, because the CLI also loads a `.env` file from there.
 */
export async function startSoketi(readyTimeoutMs = 20_000) {
  const host = '127.0.0.1';
  const [port, metricsPort, clusterPort] = await Promise.all([freePort(), freePort(), freeUdpPort()]);
  const app = { appId: 'bench-app', appKey: 'bench-key', appSecret: 'bench-secret-0123456789abcdef' };
  const workDir = mkdtempSync(join(tmpdir(), 'chat-bench-soketi-'));
  writeFileSync(join(workDir, 'soketi.json'), JSON.stringify({ 'cluster.address': host }));
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? workDir,
    SOKETI_HOST: host,
    SOKETI_PORT: String(port),
    SOKETI_METRICS_ENABLED: 'false',
    SOKETI_METRICS_HOST: host,
    SOKETI_METRICS_SERVER_PORT: String(metricsPort),
    SOKETI_CLUSTER_HOST: host,
    SOKETI_CLUSTER_PORT: String(clusterPort),
    SOKETI_CLUSTER_UNICAST_ADDRESSES: host,
    SOKETI_ADAPTER_DRIVER: 'local',
    SOKETI_QUEUE_DRIVER: 'sync',
    SOKETI_RATE_LIMITER_DRIVER: 'local',
    SOKETI_APP_MANAGER_DRIVER: 'array',
    SOKETI_DEFAULT_APP_ID: app.appId,
    SOKETI_DEFAULT_APP_KEY: app.appKey,
    SOKETI_DEFAULT_APP_SECRET: app.appSecret,
    SOKETI_DEFAULT_APP_ENABLE_CLIENT_MESSAGES: 'true',
    // -1 is "no limit" in Soketi's rate limiter and connection check.
    SOKETI_DEFAULT_APP_MAX_CONNS: '-1',
    SOKETI_DEFAULT_APP_MAX_CLIENT_EVENTS_PER_SEC: '-1',
    SOKETI_DEFAULT_APP_MAX_BACKEND_EVENTS_PER_SEC: '-1',
    SOKETI_DEFAULT_APP_MAX_READ_REQ_PER_SEC: '-1',
    SOKETI_PRESENCE_MAX_MEMBERS: '10000',
    SOKETI_SHUTDOWN_GRACE_PERIOD: '0',
    SOKETI_DEBUG: 'false',
  };
  const soketi = launch(process.execPath, [soketiServerScript(), 'start', `--config=${join(workDir, 'soketi.json')}`], {
    cwd: workDir,
    env,
  });
  // A bench that dies must not leave Soketi behind.
  const killOnExit = () => soketi.child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.off('exit', killOnExit);
    await soketi.stop('SIGTERM', 5000);
    rmSync(workDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + readyTimeoutMs;
  for (;;) {
    const exited = soketi.child.exitCode !== null || soketi.child.signalCode !== null;
    const failure = exited ? 'exited before it was ready' : Date.now() > deadline ? `was not ready within ${readyTimeoutMs} ms` : undefined;
    if (failure) {
      await stop();
      throw new Error(`Soketi ${failure}: ${soketi.output().slice(-1000)}`);
    }
    if (
      await fetch(`http://${host}:${port}/ready`).then(
        (response) => response.ok,
        () => false,
      )
    )
      break;
    await sleep(100);
  }
  return {
    host,
    port,
    ...app,
    pid: soketi.child.pid,
    version: versionOf('@soketi/soketi', SOKETI_DIR),
    uWebSocketsVersion: versionOf('uWebSockets.js', SOKETI_DIR),
    stop,
  };
}
