/**
 * Ready time of `npm start`: a real child process (npm → tsx bin/local.ts) on a free port with a
 * fresh data folder, timed from spawn to the "ready" line, then a restart on the data it left.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { round, sleep } from './stats';

export interface StartRun {
  readonly label: string;
  /** Spawn of `npm start` to its "ready" line. */
  readonly wallMs: number | null;
  /** What `bin/local.ts` prints itself (from before `startLocalRuntime` to the demo project being ready). */
  readonly reportedMs: number | null;
  readonly error?: string;
}

async function startOnce(repoRoot: string, env: Record<string, string>, label: string, timeoutMs: number): Promise<StartRun> {
  const started = performance.now();
  // Own process group, so the whole tree (npm, tsx, node, java) can be signalled by this group's id.
  const child = spawn('npm', ['start', '--silent'], { cwd: repoRoot, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<{ wallMs: number; reportedMs: number } | { error: string }>((resolve) => {
    const timer = setTimeout(() => resolve({ error: `no ready line within ${timeoutMs} ms: ${output.slice(-500)}` }), timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /ready in (\d+) ms/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ wallMs: performance.now() - started, reportedMs: Number(match[1]) });
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ error: `exited with ${code} before ready: ${output.slice(-500)}` });
    });
  });
  const outcome = await ready;
  const group = child.pid;
  if (group !== undefined && child.exitCode === null) {
    try {
      process.kill(-group, 'SIGINT');
    } catch {
      // Already gone.
    }
    const stopped = await Promise.race([exited.then(() => true), sleep(15_000).then(() => false)]);
    if (!stopped) {
      try {
        process.kill(-group, 'SIGKILL');
      } catch {
        // Already gone.
      }
      await exited;
    }
  }
  // Java may outlive npm by a moment after SIGINT; give it time to release the data folder.
  await sleep(300);
  if ('error' in outcome) return { label, wallMs: null, reportedMs: null, error: outcome.error };
  return { label, wallMs: round(outcome.wallMs, 0), reportedMs: outcome.reportedMs };
}

export async function measureStartup(options: { repoRoot: string; baseEnv: NodeJS.ProcessEnv; timeoutMs: number }): Promise<StartRun[]> {
  const dataDir = mkdtempSync(join(tmpdir(), 'chat-bench-data-'));
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.baseEnv)) if (value !== undefined) env[name] = value;
  delete env.CHAT_API_KEY;
  Object.assign(env, { PORT: '0', CHAT_DATA_DIR: dataDir });
  try {
    return [
      await startOnce(options.repoRoot, env, 'first start (empty data folder)', options.timeoutMs),
      await startOnce(options.repoRoot, env, 'restart (existing data folder)', options.timeoutMs),
    ];
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}
