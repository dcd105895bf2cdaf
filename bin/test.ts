/**
 * `npm test`: the whole gate, in as little wall time as two cores allow (docs/performance.md, "Test
 * suite time"). The static checks run side by side first, and stop the run when one fails, as
 * before. Then two lanes of vitest run side by side, each one file at a time:
 *
 * - the integration project, whose files share one local runtime (global setup) and spend much of
 *   their time waiting on it, its DynamoDB Local and their own timers;
 * - the unit and infra projects (CPU-bound synths, esbuild, cfn-lint), then the fuzz suite, which
 *   starts a runtime of its own.
 *
 * Each line of output carries the name of the step it came from. The exit code is 0 only when
 * every step passed. `npx vitest run` still runs every project in one process, one file at a time.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name: string) => join(repoRoot, 'node_modules', '.bin', name);

interface Step {
  readonly name: string;
  readonly command: string;
  readonly args: readonly string[];
}

const checks: Step[] = ['lint', 'lint:deps', 'typecheck'].map((script) => ({
  name: script,
  command: 'npm',
  args: ['run', '--silent', script],
}));

/**
 * Integration files that start a runtime of their own and need nothing of the shared one but its
 * settings: they run in the second lane, in a vitest process of their own (which starts its own
 * shared runtime, so that they see the same settings as under `npx vitest run`).
 */
const ownRuntimeFiles = [
  'test/e2e/fuzz.test.ts',
  // Three `npm start` processes (a restart, a runtime without the bucket): about 80 s, off the critical path.
  'test/e2e/attachments-runtime.test.ts',
  // Two `npm start` processes on one data directory (a restart): about 50 s. With it here the lanes
  // end within a minute of each other (docs/performance.md, "Test suite time").
  'test/e2e/sdk-restart.test.ts',
  // Its own `bin/local.ts` process with every consumer on: about 45 s. Here since the fuzz suite follows
  // the table's stream instead of scanning it (about 100 s less in this lane).
  'test/e2e/push-delivery.test.ts',
  // Its own `bin/local.ts` process with low limits: about 30 s. With the issue 27 suites the integration
  // lane took 1,162 s against 1,127 s here.
  'test/e2e/rate-limit.test.ts',
  // Headless Chromium (test/browser/): CPU-heavy, so it waits until unit and infra are done.
  'test/browser/',
];

/** Two lanes side by side; the steps of a lane one after another. */
const lanes: Step[][] = [
  [
    {
      name: 'integration',
      command: bin('vitest'),
      // `--exclude` takes globs, the file filters of the second lane take path prefixes.
      args: [
        'run',
        '--project',
        'integration',
        ...ownRuntimeFiles.flatMap((file) => ['--exclude', file.endsWith('/') ? `${file}**` : file]),
      ],
    },
  ],
  [
    { name: 'unit+infra', command: bin('vitest'), args: ['run', '--project', 'unit', '--project', 'infra'] },
    { name: 'fuzz', command: bin('vitest'), args: ['run', '--project', 'integration', ...ownRuntimeFiles] },
  ],
];

/** Writes a child's output a line at a time, each prefixed with its step's name. */
function prefixed(name: string, write: (text: string) => void) {
  let pending = '';
  return {
    push(chunk: Buffer) {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) write(`[${name}] ${line}\n`);
    },
    flush() {
      if (pending) write(`[${name}] ${pending}\n`);
      pending = '';
    },
  };
}

const running = new Set<ChildProcess>();
let stopping = false;

// Ctrl-C reaches the children through the terminal, a CI runner's SIGTERM would not: pass either on,
// and start nothing more.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    stopping = true;
    for (const child of running) child.kill(signal);
  });
}

/** Runs a step to its end; resolves with its exit code (1 when it could not start or was killed). */
function run(step: Step): Promise<number> {
  if (stopping) return Promise.resolve(1);
  const started = Date.now();
  const child = spawn(step.command, step.args, {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...(process.stdout.isTTY ? { FORCE_COLOR: '1' } : {}) },
  });
  running.add(child);
  const out = prefixed(step.name, (text) => process.stdout.write(text));
  const err = prefixed(step.name, (text) => process.stderr.write(text));
  child.stdout.on('data', out.push);
  child.stderr.on('data', err.push);
  return new Promise((resolve) => {
    child.on('error', (error) => {
      err.push(Buffer.from(`${error.message}\n`));
    });
    child.on('close', (code) => {
      running.delete(child);
      out.flush();
      err.flush();
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      process.stdout.write(`[${step.name}] ${code === 0 ? 'passed' : `failed (exit ${code})`} in ${seconds} s\n`);
      resolve(code ?? 1);
    });
  });
}

async function runAll(steps: readonly Step[]): Promise<boolean> {
  const codes = await Promise.all(steps.map(run));
  return codes.every((code) => code === 0);
}

/** Runs a lane's steps in order, each to its end whatever the one before it did. */
async function runLane(steps: readonly Step[]): Promise<boolean> {
  let passed = true;
  for (const step of steps) passed = (await run(step)) === 0 && passed;
  return passed;
}

const started = Date.now();
const passed = (await runAll(checks)) && (await Promise.all(lanes.map(runLane))).every(Boolean);
process.stdout.write(`npm test ${passed ? 'passed' : 'failed'} in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
process.exitCode = passed ? 0 : 1;
