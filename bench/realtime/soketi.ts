/**
 * Baseline B of the realtime bench: Soketi (a Pusher-protocol server on uWebSockets.js) in a child
 * process, bound to loopback, with one app whose client events are on and whose rate limits are off.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { freePort } from '../../lib/local/free-port';
import { sleep } from '../stats';

export interface SoketiServer {
  readonly host: string;
  readonly port: number;
  readonly appId: string;
  readonly appKey: string;
  readonly appSecret: string;
  readonly pid: number | undefined;
  /** Soketi's version, from its package.json. */
  readonly version: string;
  stop(): Promise<void>;
}

/** Pusher channel authorization: `key:HMAC-SHA256(secret, "socket_id:channel")` (private channels). */
export function signChannel(appKey: string, appSecret: string, socketId: string, channel: string): string {
  return `${appKey}:${createHmac('sha256', appSecret).update(`${socketId}:${channel}`).digest('hex')}`;
}

/** A UDP port nobody holds on loopback, for Soketi's cluster discovery (node-discover). */
function freeUdpPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      const { port } = socket.address();
      socket.close(() => resolve(port));
    });
  });
}

const require = createRequire(import.meta.url);

/**
 * Starts `soketi start` from the installed `@soketi/soketi` package. Settings go in as the
 * `SOKETI_*` variables its CLI reads (`dist/cli/cli.js`), plus a config file for the one setting
 * that has no variable: `cluster.address`, the address node-discover binds its UDP socket to
 * (0.0.0.0 otherwise). Discovery is unicast to 127.0.0.1 only, never broadcast. The working folder
 * is an empty temporary one, because the CLI also loads a `.env` file from there.
 */
export async function startSoketi(options: { readyTimeoutMs?: number; log?: (line: string) => void } = {}): Promise<SoketiServer> {
  const packageJson = require.resolve('@soketi/soketi/package.json');
  const version = (require(packageJson) as { version: string }).version;
  const bin = join(dirname(packageJson), 'bin', 'server.js');
  const host = '127.0.0.1';
  const [port, metricsPort, clusterPort] = await Promise.all([freePort(), freePort(), freeUdpPort()]);
  const app = { appId: 'bench-app', appKey: 'bench-key', appSecret: 'bench-secret-0123456789abcdef' };
  const workDir = mkdtempSync(join(tmpdir(), 'chat-bench-soketi-'));
  const configFile = join(workDir, 'soketi.json');
  writeFileSync(configFile, JSON.stringify({ 'cluster.address': host }));
  const env: Record<string, string> = {
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
  let output = '';
  const child: ChildProcess = spawn(process.execPath, [bin, 'start', `--config=${configFile}`], {
    cwd: workDir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // A bench that dies must not leave Soketi behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const stop = async () => {
    process.off('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const stopped = await Promise.race([exited.then(() => true), sleep(5000).then(() => false)]);
      if (!stopped) {
        child.kill('SIGKILL');
        await exited;
      }
    }
    rmSync(workDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + (options.readyTimeoutMs ?? 20_000);
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(`Soketi exited before it was ready: ${output.slice(-1000)}`);
    }
    try {
      const response = await fetch(`http://${host}:${port}/ready`);
      if (response.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`Soketi was not ready within ${options.readyTimeoutMs ?? 20_000} ms: ${output.slice(-1000)}`);
    }
    await sleep(100);
  }
  options.log?.(`  Soketi ${version} ready on ${host}:${port} (pid ${child.pid})`);
  return { host, port, ...app, pid: child.pid, version, stop };
}
