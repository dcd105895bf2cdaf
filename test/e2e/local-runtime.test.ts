import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../lib/local/free-port';
import { type ApiOptions, clientOf } from '../support/api';
import { isAlive, type LocalProcess, repoRoot, startLocalProcess } from '../support/local-process';

const call = (base: string, path: string, options: ApiOptions = {}) => clientOf(base)(path, options);

describe('npm start (bin/local.ts) as a process', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'chat-data-'));
  const started: LocalProcess[] = [];
  afterAll(async () => {
    // SIGKILL gives bin/local.ts no chance to stop its DynamoDB Local, which would run on alone.
    await Promise.all(
      started.map(async (local) => {
        const javaPids = local.javaPids();
        await local.stop('SIGKILL');
        for (const pid of javaPids.filter(isAlive)) process.kill(pid, 'SIGKILL');
      }),
    );
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps rooms and messages across a restart on the same data folder, and Ctrl-C stops Java too', async () => {
    // Prepare: first run creates the demo project, a room and a message
    const first = await startLocalProcess({ env: { CHAT_DATA_DIR: dataDir } });
    started.push(first);
    expect(first.output()).toMatch(/Project id:\s+demo/);
    const token = (await call(first.baseUrl, '/auth/token', { apiKey: first.apiKey, body: { userId: 'alice' } })).body.token;
    expect((await call(first.baseUrl, '/rooms', { token, body: { id: 'kept', type: 'group', members: ['bob'] } })).status).toBe(201);
    const sent = await call(first.baseUrl, '/messages', { token, body: { roomId: 'kept', content: 'survives restarts' } });
    expect(sent.status).toBe(201);
    const javaPids = first.javaPids();
    expect(javaPids.length).toBeGreaterThan(0);

    // Act: Ctrl-C, then start again on the same folder
    expect(await first.stop('SIGINT')).toBe(0);
    expect(javaPids.filter(isAlive)).toEqual([]);
    const second = await startLocalProcess({ env: { CHAT_DATA_DIR: dataDir } });
    started.push(second);

    // Assess: same API key, same room, same message
    expect(second.apiKey).toBe(first.apiKey);
    const again = (await call(second.baseUrl, '/auth/token', { apiKey: second.apiKey, body: { userId: 'alice' } })).body.token;
    const room = await call(second.baseUrl, '/rooms/kept', { token: again });
    expect(room.status).toBe(200);
    const history = await call(second.baseUrl, '/rooms/kept/messages', { token: again });
    expect(history.body.messages).toEqual([sent.body]);
    expect(await second.stop('SIGTERM')).toBe(0);
  }, 120_000);

  it('uses CHAT_API_KEY as the demo key and --in-memory keeps nothing', async () => {
    // Prepare
    const apiKey = 'ck_demo_this-is-a-chosen-local-key';

    // Act
    // The worker's environment carries the shared runtime's AI_BASE_URL: unset it, as a fresh shell has it.
    const local = await startLocalProcess({ args: ['--in-memory'], env: { CHAT_API_KEY: apiKey, AI_BASE_URL: '' } });
    started.push(local);
    const issued = await call(local.baseUrl, '/auth/token', { apiKey, body: { userId: 'carol' } });
    const rooms = await call(local.baseUrl, '/rooms', { token: issued.body.token });

    // Assess
    expect(local.apiKey).toBe(apiKey);
    expect(local.output()).toContain('in memory');
    expect(local.output()).toMatch(/^ {2}AI: +off: set AI_BASE_URL/m);
    expect(issued.status).toBe(201);
    expect(rooms.body.rooms).toEqual([]);
    expect(await local.stop()).toBe(0);
  }, 60_000);

  it('answers GET /health with 200 only once the demo key works, 503 starting before', async () => {
    // Prepare
    const apiKey = 'ck_demo_a-key-to-use-right-after-health';
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const starting = startLocalProcess({ args: ['--in-memory'], env: { PORT: String(port), CHAT_API_KEY: apiKey } });

    // Act: what a start-up script does, polling as fast as it can
    const earlier: unknown[] = [];
    let health: Response | undefined;
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      health = await fetch(`${base}/health`).catch(() => undefined);
      if (health?.status === 200) break;
      if (health) earlier.push({ status: health.status, body: await health.json() });
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const issued = await call(base, '/auth/token', { apiKey, body: { userId: 'dora' } });
    started.push(await starting);

    // Assess
    expect(health?.status).toBe(200);
    expect(issued.status).toBe(201);
    for (const answer of earlier) expect(answer).toMatchObject({ status: 503, body: { status: 'starting' } });
  }, 60_000);

  it('says in the banner that AI is on, with its base URL and the model of each purpose', async () => {
    // Act
    const local = await startLocalProcess({
      args: ['--in-memory'],
      env: { AI_BASE_URL: 'http://127.0.0.1:11434/v1', AI_MODEL: 'llama3.2', AI_SUMMARY_MODEL: 'qwen2.5:0.5b' },
    });
    started.push(local);

    // Assess
    expect(local.output()).toMatch(
      /^ {2}AI: +on: http:\/\/127\.0\.0\.1:11434\/v1, models: agents llama3\.2, suggestions llama3\.2, summaries qwen2\.5:0\.5b$/m,
    );
    expect(await local.stop()).toBe(0);
  }, 60_000);
});

/** Runs `bin/local.ts` (what `npm start` runs) until it exits on its own: a start that must fail. */
function runToExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts', '--in-memory'], {
      cwd: repoRoot,
      env: { ...process.env, PORT: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('close', (code) => resolve({ code, output }));
  });
}

describe('npm start that cannot start says why in one line', () => {
  const binDirs: string[] = [];
  afterAll(() => {
    for (const dir of binDirs) rmSync(dir, { recursive: true, force: true });
  });
  /** A PATH of one folder holding `node` and the given executables (never the machine's `java`). */
  const pathWith = (executables: Record<string, string> = {}) => {
    const dir = mkdtempSync(join(tmpdir(), 'chat-path-'));
    binDirs.push(dir);
    symlinkSync(process.execPath, join(dir, 'node'));
    for (const [name, script] of Object.entries(executables)) writeFileSync(join(dir, name), script, { mode: 0o755 });
    return dir;
  };

  it('without java on PATH: names what to install, exits 1, no stack trace', async () => {
    // Act
    const { code, output } = await runToExit({ PATH: pathWith() });

    // Assess
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toEqual([
      expect.stringMatching(/^Could not start: DynamoDB Local runs on Java, and there is no `java` on PATH: install Java 17 or later/),
    ]);
    expect(output).toContain('openjdk-17-jre-headless');
  }, 60_000);

  it('with a java older than 17 on PATH: says it is too old and what to install', async () => {
    // Prepare: what Java 11 answers to DynamoDB Local's class files (version 61)
    const java11 = `#!/bin/sh
echo 'Error: LinkageError occurred while loading main class software.amazon.dynamodb.services.local.main.ServerRunner' >&2
echo '\tjava.lang.UnsupportedClassVersionError: software/amazon/dynamodb/services/local/main/ServerRunner has been compiled by a more recent version of the Java Runtime (class file version 61.0), this version of the Java Runtime only recognizes class file versions up to 55.0' >&2
exit 1
`;

    // Act
    const { code, output } = await runToExit({ PATH: pathWith({ java: java11 }) });

    // Assess
    expect(code).toBe(1);
    expect(output.trim().split('\n')).toEqual([
      expect.stringMatching(/^Could not start: DynamoDB Local needs Java 17 or later, and the `java` on PATH is older: install Java 17/),
    ]);
  }, 60_000);

  it('on a port already in use: suggests PORT=0, exits 1, no stack trace', async () => {
    // Prepare: a real listener on the port
    const holder: Server = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as { port: number }).port;

    try {
      // Act
      const { code, output } = await runToExit({ PORT: String(port) });

      // Assess
      expect(code).toBe(1);
      expect(output.trim().split('\n')).toEqual([expect.stringMatching(new RegExp(`^Could not start: port ${port} is in use.*PORT=0`))]);
    } finally {
      await new Promise((resolve) => holder.close(resolve));
    }
  }, 60_000);
});
