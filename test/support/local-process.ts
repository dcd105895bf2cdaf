import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export interface LocalProcess {
  readonly baseUrl: string;
  readonly apiKey: string;
  readonly child: ChildProcess;
  readonly output: () => string;
  /** Pids of the Java processes it started (DynamoDB Local). */
  readonly javaPids: () => number[];
  /** Sends a signal and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Runs `bin/local.ts` (what `npm start` runs) as its own process on a free port and waits for its banner. */
export async function startLocalProcess(options: { args?: string[]; env?: Record<string, string> } = {}): Promise<LocalProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bin/local.ts', ...(options.args ?? [])], {
    cwd: repoRoot,
    env: { ...process.env, PORT: '0', POWERTOOLS_LOG_LEVEL: 'ERROR', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const deadline = Date.now() + 60_000;
  while (!/API key:\s+\S+/.test(output)) {
    if (child.exitCode !== null) throw new Error(`bin/local.ts exited with ${child.exitCode}:\n${output}`);
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`bin/local.ts not ready within 60 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const baseUrl = /Base URL:\s+(\S+)/.exec(output)?.[1] as string;
  const apiKey = /API key:\s+(\S+)/.exec(output)?.[1] as string;
  return {
    baseUrl,
    apiKey,
    child,
    output: () => output,
    javaPids: () => {
      try {
        return execFileSync('pgrep', ['-P', String(child.pid), 'java'])
          .toString()
          .trim()
          .split('\n')
          .filter(Boolean)
          .map(Number);
      } catch {
        return [];
      }
    },
    async stop(signal = 'SIGINT') {
      if (child.exitCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Alive and not a zombie waiting to be reaped. */
export const isAlive = (pid: number) => {
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};
