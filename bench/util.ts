/**
 * What every benchmark shares, imported by the bench process and by its child processes alike (so
 * nothing here starts anything at import): statistics, CPU readings from `/proc`, child processes
 * (a launched command, and an IPC child driven one command at a time), the HTTP client of the
 * local gateway, a webhook receiver and AWS list prices.
 */
import { execFileSync, fork, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_PING_INTERVAL_MS } from '../sdk/settings';

export const repoRoot = fileURLToPath(new URL('..', import.meta.url));

// Statistics

export const sum = (values: readonly number[]): number => values.reduce((total, value) => total + value, 0);
export const mean = (values: readonly number[]): number => (values.length ? sum(values) / values.length : Number.NaN);

/** Nearest-rank percentile (`p` in 0..100) of unsorted values. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1] as number;
}

export const median = (values: readonly number[]): number => percentile(values, 50);

/** Rounds for reports: keeps JSON and Markdown free of float noise. */
export const round = (value: number, digits = 2): number =>
  Number.isFinite(value) ? Math.round(value * 10 ** digits) / 10 ** digits : value;

/** p50 / p99 / max of latencies, to 0.1 ms. */
export const latencySummary = (values: readonly number[]) => ({
  p50: round(percentile(values, 50), 1),
  p99: round(percentile(values, 99), 1),
  max: round(
    values.reduce((max, value) => Math.max(max, value), Number.NEGATIVE_INFINITY),
    1,
  ),
});

/** How often each value occurs, most frequent first: `[[3, 198], [5, 2]]`. */
export function histogram(values: readonly number[]): [number, number][] {
  const counts = new Map<number, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]);
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Mean of `count` per key, divided by `by` and rounded: `{ PutItem: 1, Query: 1.05 }`. */
export function countBy(names: readonly string[], by: number, digits = 3): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const name of names) counts[name] = (counts[name] ?? 0) + 1;
  return Object.fromEntries(Object.entries(counts).map(([name, count]) => [name, round(count / by, digits)]));
}

/**
 * An installed package's version (from node_modules: some packages do not export package.json), in
 * the project's install or another folder's (`bench/soketi`).
 */
export function versionOf(name: string, installDir = repoRoot): string {
  try {
    return (JSON.parse(readFileSync(join(installDir, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

// CPU readings

const clockTicks = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU of a process so far, in ms, from `/proc` (undefined when it is gone). */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / clockTicks) * 1000;
  } catch {
    return undefined;
  }
}

/** This process's own CPU so far, in ms (all threads). */
export function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** A direct child of this process by command name (DynamoDB Local is a `java` child of the bench process). */
export function childPid(command: string): number | undefined {
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.includes(`(${command})`) && Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid)
        return Number(entry);
    } catch {
      // The process ended while we looked.
    }
  }
  return undefined;
}

/** Busy CPU time of the whole machine so far, in ms (all cores: user, nice, system, irq, softirq, steal). */
export function machineBusyMs(): number | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
    return ((user + nice + system + irq + softirq + steal) / clockTicks) * 1000;
  } catch {
    return undefined;
  }
}

// Child processes

/**
 * A command run as a child process with its output kept (stdout and stderr, the last 64 KB).
 * `group`: its own process group, so that `stop` signals the whole tree (npm → tsx → node → java).
 */
export function launch(command: string, args: readonly string[], options: { env: NodeJS.ProcessEnv; cwd?: string; group?: boolean }) {
  const started = performance.now();
  const child = spawn(command, args, {
    cwd: options.cwd ?? repoRoot,
    env: options.env,
    detached: options.group,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-65_536);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise<number | null>((resolve) => {
    child.once('close', (code) => resolve(code));
    child.once('error', (error) => {
      keep(Buffer.from(String(error)));
      resolve(null);
    });
  });
  const signal = (name: NodeJS.Signals) => {
    try {
      if (options.group && child.pid !== undefined) process.kill(-child.pid, name);
      else child.kill(name);
    } catch {
      // Already gone.
    }
  };
  return {
    child,
    exited,
    output: () => output,
    ms: () => performance.now() - started,
    /** Sends `first`, then SIGKILL when it has not exited within `graceMs`. */
    async stop(first: NodeJS.Signals = 'SIGTERM', graceMs = 5000): Promise<void> {
      if (child.exitCode !== null || child.signalCode !== null) return;
      signal(first);
      if (!(await Promise.race([exited.then(() => true), sleep(graceMs).then(() => false)]))) {
        signal('SIGKILL');
        await exited;
      }
    },
  };
}

/** What an IPC child serves: async methods the bench process calls by name. */
type Methods = Record<string, (...args: any[]) => Promise<unknown>>;

/**
 * A child `node --import tsx <script>` (a load generator, a receivers process) whose methods (its
 * {@link serveIpc}) the bench process calls over IPC, one call at a time; `stop` lets it close,
 * and kills it when it has not exited `killAfterMs` later.
 */
export function forkIpc<M extends Methods>(script: string, name: string, killAfterMs: number, env?: NodeJS.ProcessEnv) {
  const child = fork(join(repoRoot, script), [], {
    // By default this process's environment; a child that starts a runtime of its own takes the one
    // from before the bench's runtime wrote its settings into it (`Context.baseEnv`).
    env,
    // Explicit: the bench process's own execArgv carries tsx's CLI hooks, which need not apply.
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  return {
    pid: child.pid,
    call: <K extends keyof M & string>(method: K, ...args: Parameters<M[K]>) =>
      new Promise<Awaited<ReturnType<M[K]>>>((resolve, reject) => {
        const settle = (answer: { value?: any; error?: string }) => {
          child.off('message', settle).off('exit', gone);
          if (answer.error === undefined) resolve(answer.value);
          else reject(new Error(`${name}: ${answer.error}`));
        };
        const gone = () => settle({ error: 'the child process exited' });
        child.on('message', settle).once('exit', gone);
        child.send({ method, args });
      }),
    async stop(): Promise<void> {
      if (exited()) return;
      const timer = setTimeout(() => child.kill(), killAfterMs);
      child.send({ method: 'exit', args: [] });
      if (!exited()) await new Promise((resolve) => child.once('exit', resolve));
      clearTimeout(timer);
    },
  };
}

/** The child side of {@link forkIpc}: serves `methods`; `exit` runs `close`; it ends when the bench process is gone. */
export function serveIpc(methods: Methods, close: () => Promise<void> | void): void {
  process.on('message', ({ method, args }: { method: string; args: unknown[] }) => {
    if (method === 'exit') {
      void Promise.resolve(close()).finally(() => process.disconnect?.());
      return;
    }
    const run = methods[method];
    (run ? run(...args) : Promise.reject(new Error(`no method ${method}`))).then(
      (value) => process.send?.({ value }),
      (error: unknown) => process.send?.({ error: error instanceof Error ? error.message : String(error) }),
    );
  });
  // The bench process is gone (finished, or killed): nothing is left to measure for.
  process.on('disconnect', () => process.exit(0));
}

// The local gateway, as a client reaches it

export const BENCH_OPERATOR_KEY = 'bench-operator-key-0123456789abcdef';

/** A realistic chat line: 120 characters, no @mention, no block-listed term. */
export const MESSAGE_CONTENT =
  'Deploy went out at noon; dashboards look calm so far. I will keep an eye on the error budget and report back tonight!!';

export const uniqueId = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex')}`;

/** SDK client settings for a local stand-in (DynamoDB Local, the SQS stand-in). */
export const localAws = (endpoint: string) => ({
  endpoint,
  region: 'us-east-1',
  credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
});

type RequestOptions = { method?: string; body?: unknown; token?: string; apiKey?: string; headers?: Record<string, string> };

/** Real requests to the local gateway with the global `fetch` (undici, keep-alive connection pool). */
export class Api {
  constructor(readonly baseUrl: string) {}

  /** Status and parsed body (the text when it is not JSON). */
  async request(path: string, options: RequestOptions = {}): Promise<{ status: number; body: any }> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.apiKey) headers['x-service-api-key'] = options.apiKey;
    const body = options.body === undefined ? undefined : JSON.stringify(options.body);
    if (body) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.baseUrl}${path}`, { method: options.method ?? (body ? 'POST' : 'GET'), headers, body });
    const text = await response.text();
    try {
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    } catch {
      return { status: response.status, body: text };
    }
  }

  /** Like `request`, but throws unless the status is the expected one. */
  async expect(status: number, path: string, options: RequestOptions = {}) {
    const result = await this.request(path, options);
    if (result.status !== status) {
      throw new Error(`${options.method ?? 'POST'} ${path}: expected ${status}, got ${result.status} ${JSON.stringify(result.body)}`);
    }
    return result;
  }
}

/**
 * A fresh tenant, so every scenario starts from its own data (as the e2e tests do): a project
 * through the operator route, user tokens through `/auth/token`.
 */
export async function createProject(api: Api, name: string) {
  const created = await api.expect(201, '/platform/projects', {
    body: { name },
    headers: { 'x-service-operator-key': BENCH_OPERATOR_KEY },
  });
  const { projectId, apiKey } = created.body as { projectId: string; apiKey: string };
  const token = async (userId: string) => (await api.expect(201, '/auth/token', { apiKey, body: { userId } })).body.token as string;
  return { projectId, apiKey, token };
}

/**
 * A webhook receiver on loopback: `answer` gets each request's parsed body and returns the status.
 * Registered for `message.created` on the project by `register`.
 */
export async function startWebhookReceiver(answer: (event: { payload: { messageId: number } }) => number) {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => response.writeHead(answer(JSON.parse(body))).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return {
    register: (api: Api, apiKey: string) =>
      api.expect(201, '/webhooks/register', { apiKey, body: { url, eventTypes: ['message.created'] } }),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** AWS list prices, us-east-1, per million units (on-demand DynamoDB after the November 2024 reduction). */
export const PRICES = {
  sqsPerMillionRequests: 0.4,
  lambdaPerMillionInvocations: 0.2,
  dynamoPerMillionWriteUnits: 0.625,
  dynamoPerMillionReadUnits: 0.125,
  stepFunctionsPerMillionTransitions: 25,
  /** API Gateway WebSocket: per million messages (sent or received), each up to 32 KB. */
  apiGatewayWebSocketPerMillionMessages: 1.0,
  apiGatewayWebSocketPerMillionConnectionMinutes: 0.25,
  /** Lambda on ARM64 (ChatFunction's architecture), per GB-second of duration. */
  lambdaPerGbSecondArm: 0.0000133334,
  snsPerMillionPublishes: 0.5,
} as const;

/**
 * What one connection costs for an hour with nobody writing: API Gateway's 60 connection minutes,
 * the SDK's keep-alives (each ping and its pong two messages, every `DEFAULT_PING_INTERVAL_MS`),
 * and the Lambda requests the pings cause when no MOCK route answers them. In US dollars.
 */
export function idleConnectionHour(idleInvocationsPerHour: number) {
  const pingsPerHour = 3_600_000 / DEFAULT_PING_INTERVAL_MS;
  const lines: [string, number][] = [
    ['connection minutes (60)', (60 * PRICES.apiGatewayWebSocketPerMillionConnectionMinutes) / 1e6],
    [`keep-alives (${pingsPerHour} pings and pongs)`, (2 * pingsPerHour * PRICES.apiGatewayWebSocketPerMillionMessages) / 1e6],
    ...(idleInvocationsPerHour
      ? [
          [`Lambda requests (${idleInvocationsPerHour})`, (idleInvocationsPerHour * PRICES.lambdaPerMillionInvocations) / 1e6] as [
            string,
            number,
          ],
        ]
      : []),
  ];
  const total = lines.reduce((all, [, dollars]) => all + dollars, 0);
  const largest = [...lines].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'n/a';
  return { pingsPerHour, messagesPerHour: 2 * pingsPerHour, lines, total, largest };
}

/** Keeps `concurrency` senders calling `op` until `deadline`; each call's latency goes to `latencies`; returns the failures. */
export async function runUntil(concurrency: number, deadline: number, op: (sender: number) => Promise<boolean>, latencies: number[] = []) {
  let failures = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async (_, sender) => {
      while (performance.now() < deadline) {
        const started = performance.now();
        if (!(await op(sender).catch(() => false))) failures++;
        latencies.push(performance.now() - started);
      }
    }),
  );
  return failures;
}
