import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../lib/local/free-port';
import { type ApiOptions, clientOf } from '../support/api';
import { isAlive, type LocalProcess, startLocalProcess } from '../support/local-process';

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
    const local = await startLocalProcess({ args: ['--in-memory'], env: { CHAT_API_KEY: apiKey } });
    started.push(local);
    const issued = await call(local.baseUrl, '/auth/token', { apiKey, body: { userId: 'carol' } });
    const rooms = await call(local.baseUrl, '/rooms', { token: issued.body.token });

    // Assess
    expect(local.apiKey).toBe(apiKey);
    expect(local.output()).toContain('in memory');
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
});
