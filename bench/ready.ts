/**
 * Section 4: how long the developer waits. `startLocalRuntime` in the bench process (timed by the
 * harness when it starts the runtime), and `npm start` as a real child process (npm → tsx
 * bin/local.ts) on a free port with a fresh data folder, timed from spawn to the "ready" line, then
 * restarted on the data it left.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Bench, fmt, GOALS, table } from './harness';
import { launch, round, sleep } from './util';

async function startOnce(env: NodeJS.ProcessEnv, label: string, timeoutMs: number) {
  const child = launch('npm', ['start', '--silent'], { env, group: true });
  const streams = [child.child.stdout, child.child.stderr];
  const ready = await new Promise<RegExpExecArray | null>((resolve) => {
    const done = (match: RegExpExecArray | null) => {
      clearTimeout(timer);
      for (const stream of streams) stream.off('data', check);
      resolve(match);
    };
    // After launch's own listener, so the output holds the chunk.
    const check = () => {
      const match = /ready in (\d+) ms/.exec(child.output());
      if (match) done(match);
    };
    const timer = setTimeout(() => done(null), timeoutMs);
    for (const stream of streams) stream.on('data', check);
    void child.exited.then(() => done(null));
  });
  const wallMs = child.ms();
  const error = ready
    ? undefined
    : `${child.child.exitCode === null ? `no ready line within ${timeoutMs} ms` : `exited with ${child.child.exitCode} before ready`}: ${child.output().slice(-500)}`;
  await child.stop('SIGINT', 15_000);
  // Java may outlive npm by a moment after SIGINT; give it time to release the data folder.
  await sleep(300);
  /** wallMs: spawn of `npm start` to its "ready" line; reportedMs: what `bin/local.ts` prints itself. */
  return ready ? { label, wallMs: round(wallMs, 0), reportedMs: Number(ready[1]) } : { label, wallMs: null, reportedMs: null, error };
}

type Ready = { runtimeReadyMs: number; npmStart: Awaited<ReturnType<typeof startOnce>>[] };

export const ready: Bench<Ready> = {
  id: 'ready',
  name: 'npm start',
  needs: 'machine',
  async run({ service, baseEnv }) {
    const dataDir = mkdtempSync(join(tmpdir(), 'chat-bench-data-'));
    const env = { ...baseEnv, CHAT_API_KEY: undefined, PORT: '0', CHAT_DATA_DIR: dataDir };
    try {
      return {
        runtimeReadyMs: service.readyMs,
        npmStart: [
          await startOnce(env, 'first start (empty data folder)', 60_000),
          await startOnce(env, 'restart (existing data folder)', 60_000),
        ],
      };
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  },

  goals: ({ runtimeReadyMs, npmStart }) => [
    {
      id: 'ready.runtime',
      name: 'Local runtime ready (`startLocalRuntime`, in process)',
      target: `< ${GOALS.readyMs / 1000} s`,
      measured: `${fmt(runtimeReadyMs / 1000, 2)} s`,
      pass: runtimeReadyMs < GOALS.readyMs,
    },
    ...npmStart.map((run) => ({
      id: `ready.npmStart.${run.label.startsWith('first') ? 'first' : 'restart'}`,
      name: `\`npm start\` ready, ${run.label}`,
      target: `< ${GOALS.readyMs / 1000} s`,
      measured: run.wallMs === null ? `failed: ${run.error}` : `${fmt(run.wallMs / 1000, 2)} s`,
      pass: run.wallMs !== null && run.wallMs < GOALS.readyMs,
    })),
  ],

  section: ({ runtimeReadyMs, npmStart }) => `## 4. Local runtime ready time

\`startLocalRuntime\` starts DynamoDB Local (Java), the SQS stand-in and the gateway, and creates the table. \`npm start\` is run as a child process (\`npm start\`, \`PORT=0\`, \`CHAT_DATA_DIR\` a fresh temporary folder), timed from spawn to its "ready" line, then stopped with SIGINT and started again on the data it left; "printed" is the figure \`bin/local.ts\` reports itself, which leaves out npm and tsx start-up. Goal: ready in under ${GOALS.readyMs / 1000} s.

${table('What | Ready (s) | Printed by bin/local.ts (s)', [
  ['`startLocalRuntime()` in the bench process (DynamoDB Local in memory)', fmt(runtimeReadyMs / 1000, 2), '—'],
  ...npmStart.map((run) => [
    `\`npm start\`, ${run.label}`,
    run.wallMs === null ? `failed: ${run.error}` : fmt(run.wallMs / 1000, 2),
    run.reportedMs === null ? '—' : fmt(run.reportedMs / 1000, 2),
  ]),
])}`,
};
