/**
 * Realtime fan-out benchmark: one room of N = 10, 100, 1000 WebSocket receivers, delivery latency
 * (sender's send → each receiver's receipt) and deliveries per second, at a fixed offered rate
 * and at the highest rate that keeps p99 ≤ 100 ms with every frame delivered, for
 *
 *   - the plain `ws` broadcast server (bench/realtime/plain-ws-server.ts): the physical limit,
 *   - Soketi driven by pusher-js (bench/realtime/soketi.ts): an off-the-shelf Pusher server,
 *   - the service's local runtime: persisted messages and `client-*` events,
 *
 * plus the AWS work per frame on the service. Every target gets its own receivers child process
 * (bench/realtime/receivers.ts) holding the sender and the receivers, so client CPU is never
 * charged to the server under test. `runRealtimeBench` returns the figures;
 * `renderRealtimeMarkdown` turns them into the "Realtime fan-out" section.
 */
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LocalRuntime } from '../../lib/local/runtime';
import { childPid, ownCpuMs, processCpuMs } from '../child-process';
import { type Api, Api as ApiClient, BENCH_OPERATOR_KEY, createProject, uniqueId } from '../client';
import { instrument, Recorder } from '../instrument';
import { round } from '../stats';
import { type CostRow, measureCost, waitForSilence } from './cost';
import { type MeasureSettings, maxDeliveries, measureSeries, type SeriesResult } from './measure';
import { startPlainWsServer } from './plain-ws-server';
import type { TargetConfig, TargetKind, Workload } from './protocol';
import { ReceiversProcess } from './receivers-process';
import { startSoketi } from './soketi';

export { renderRealtimeMarkdown } from './report';

/**
 * Settings the service's local runtime needs for this bench: no message or client-event rate limit
 * in the way. `runRealtimeBench` starts its runtime with them; a runtime handed in should have them.
 */
export const REALTIME_RUNTIME_ENV: Readonly<Record<string, string>> = {
  CHAT_OPERATOR_KEY: BENCH_OPERATOR_KEY,
  RATE_LIMIT_MESSAGES_PER_MINUTE: '100000000',
  RATE_LIMIT_CLIENT_EVENTS_PER_SECOND: '1000000',
};

export interface RealtimeBenchOptions {
  /** Room sizes, grown in order on the same room. @default [10, 100, 1000] */
  readonly receivers?: readonly number[];
  /** @default ['plain', 'soketi', 'service'] */
  readonly targets?: readonly TargetKind[];
  readonly settings?: Partial<MeasureSettings>;
  /**
   * Seconds each target may spend before its searches stop taking steps (fixed-rate windows
   * always run). @default { plain: 25, soketi: 25, service: 90 }
   */
  readonly budgetSeconds?: Partial<Record<TargetKind, number>>;
  /** Room sizes at which the service's AWS work per frame is counted. @default [10, 100] */
  readonly costReceivers?: readonly number[];
  /** Frames per workload counted for cost. @default 20 */
  readonly costFrames?: number;
  /**
   * A local runtime already running in this process (one per process: handlers read their settings
   * at first import). It should have been started with `REALTIME_RUNTIME_ENV`; its queue consumers
   * are started if they are not. Without it the bench starts (and stops) its own.
   */
  readonly runtime?: LocalRuntime;
  readonly log?: (line: string) => void;
}

export interface TargetResult {
  readonly target: TargetKind;
  readonly label: string;
  /** What ran, with versions. */
  readonly software: string;
  readonly workloads: readonly Workload[];
  /** Growing the room to each N (sender first). */
  readonly connect: readonly ConnectStep[];
  readonly series: readonly SeriesResult[];
  /** Why the target stopped early, if it did (figures up to there are kept). */
  readonly error?: string;
  readonly seconds: number;
}

export interface ConnectStep {
  readonly receivers: number;
  /** Every new socket ready (open, subscribed, or its `connected` frame received). */
  readonly ms: number;
  /** Then until no frame came for a while (presence frames and other follow-ups done). */
  readonly settleMs: number;
  /**
   * Receivers a check event then did not reach, per round; each round reopens them. Anything here
   * means the server dropped live connections while the room filled up.
   */
  readonly missed: readonly number[];
  /** Receivers still unreached after the last round (every window then misses them). */
  readonly stillMissing: number;
}

export interface RealtimeGoal {
  readonly id: string;
  readonly name: string;
  readonly target: string;
  readonly measured: string;
  /** null: not measurable in this run (a leg failed). */
  readonly pass: boolean | null;
}

export interface RealtimeBenchResult {
  readonly generatedAt: string;
  readonly seconds: number;
  readonly machine: {
    readonly cpus: number;
    readonly cpuModel: string;
    readonly memoryGiB: number;
    readonly node: string;
    readonly loadAverageAtStart: number;
  };
  readonly receivers: readonly number[];
  readonly settings: MeasureSettings;
  readonly budgetSeconds: Readonly<Record<TargetKind, number>>;
  readonly targets: readonly TargetResult[];
  readonly cost: { readonly rows: readonly CostRow[]; readonly error?: string };
  readonly goals: readonly RealtimeGoal[];
  /** Things the run noticed that bear on how to read it. */
  readonly notes: readonly string[];
}

export const DEFAULT_SETTINGS: MeasureSettings = {
  fixedRate: 10,
  fixedDeliveries: 2000,
  fixedWindowMs: 2000,
  fixedDrainMs: 3000,
  searchSteps: 4,
  searchFactor: 4,
  searchFrames: 20,
  searchWindowMs: { min: 1000, max: 2000 },
  searchDrainMs: 1000,
  quietMs: 250,
  quietMaxMs: 12_000,
};

const DEFAULT_BUDGET: Record<TargetKind, number> = { plain: 25, soketi: 25, service: 90 };
const CONNECT = { concurrency: 50, timeoutMs: 15_000 };

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** An installed package's version (read from node_modules: some packages do not export package.json). */
const versionOf = (name: string): string => {
  try {
    return (JSON.parse(readFileSync(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
};

interface TargetPlan {
  readonly target: TargetKind;
  readonly label: string;
  readonly software: string;
  readonly workloads: readonly Workload[];
  readonly config: TargetConfig;
  readonly serverCpuMs: () => number | null;
  /** After the series at one N: the service counts its AWS work there. */
  readonly afterSize?: (receivers: ReceiversProcess, n: number) => Promise<void>;
}

/** Grows the room through every N and measures each workload there; keeps what it got on failure. */
async function measureTarget(
  plan: TargetPlan,
  sizes: readonly number[],
  settings: MeasureSettings,
  budgetSeconds: number,
  log: (line: string) => void,
): Promise<TargetResult> {
  const started = performance.now();
  const deadline = started + budgetSeconds * 1000;
  const connect: ConnectStep[] = [];
  const series: SeriesResult[] = [];
  let error: string | undefined;
  let receivers: ReceiversProcess | undefined;
  try {
    receivers = await ReceiversProcess.start(plan.config);
    for (const n of sizes) {
      const ms = await receivers.connect(n, CONNECT);
      const settled = await receivers.quiet(settings.quietMs * 2, 20_000);
      const checked = await receivers.verify({ timeoutMs: 3000, rounds: 3, concurrency: CONNECT.concurrency });
      connect.push({
        receivers: n,
        ms: round(ms, 0),
        settleMs: round(settled.ms, 0),
        missed: checked.missing,
        stillMissing: checked.stillMissing,
      });
      log(
        `  ${plan.target}: ${n} receivers connected in ${round(ms, 0)} ms (then ${round(settled.ms, 0)} ms until quiet)${
          checked.missing.length
            ? `; a check event missed ${checked.missing.join(', then ')} of them (reopened), ${checked.stillMissing} still missed`
            : ''
        }`,
      );
      for (const workload of plan.workloads) {
        series.push(
          await measureSeries({
            target: plan.target,
            workload,
            receivers,
            receiverCount: n,
            serverCpuMs: plan.serverCpuMs,
            settings,
            deadline,
            log,
          }),
        );
      }
      await plan.afterSize?.(receivers, n);
    }
  } catch (caught) {
    error = caught instanceof Error ? caught.message : String(caught);
    log(`  ${plan.target}: stopped: ${error}`);
  } finally {
    await receivers?.stop().catch(() => undefined);
  }
  return {
    target: plan.target,
    label: plan.label,
    software: plan.software,
    workloads: plan.workloads,
    connect,
    series,
    ...(error ? { error } : {}),
    seconds: round((performance.now() - started) / 1000, 1),
  };
}

async function mapLimit<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await work(items[index] as T);
      }
    }),
  );
  return results;
}

async function plainTarget(sizes: readonly number[], settings: MeasureSettings, budget: number, log: (line: string) => void) {
  const server = await startPlainWsServer();
  try {
    return await measureTarget(
      {
        target: 'plain',
        label: 'Plain `ws` broadcast',
        software: `ws ${versionOf('ws')} server in the bench process; clients: ws`,
        workloads: ['client'],
        config: { kind: 'plain', url: `${server.url}/rooms/bench` },
        serverCpuMs: ownCpuMs,
      },
      sizes,
      settings,
      budget,
      log,
    );
  } finally {
    await server.stop();
  }
}

async function soketiTarget(sizes: readonly number[], settings: MeasureSettings, budget: number, log: (line: string) => void) {
  const soketi = await startSoketi({ log });
  try {
    return await measureTarget(
      {
        target: 'soketi',
        label: 'Soketi',
        software: `@soketi/soketi ${soketi.version} (uWebSockets.js ${versionOf('uWebSockets.js')}) as a child process; clients: pusher-js ${versionOf('pusher-js')}, private channel`,
        workloads: ['client'],
        config: {
          kind: 'soketi',
          host: soketi.host,
          port: soketi.port,
          appKey: soketi.appKey,
          appSecret: soketi.appSecret,
          channel: 'private-bench',
        },
        serverCpuMs: () => processCpuMs(soketi.pid) ?? null,
      },
      sizes,
      settings,
      budget,
      log,
    );
  } finally {
    await soketi.stop();
  }
}

async function serviceTarget(
  options: RealtimeBenchOptions,
  sizes: readonly number[],
  settings: MeasureSettings,
  budget: number,
  log: (line: string) => void,
  notes: string[],
): Promise<{ result: TargetResult; cost: { rows: CostRow[]; error?: string } }> {
  const started = performance.now();
  const costSizes = new Set(options.costReceivers ?? [10, 100]);
  const costFrames = options.costFrames ?? 20;
  const cost: { rows: CostRow[]; error?: string } = { rows: [] };
  let runtime = options.runtime;
  const owned = !runtime;
  if (!runtime) {
    const { startLocalRuntime } = await import('../../lib/local/runtime');
    runtime = await startLocalRuntime({ port: 0, consumers: true, env: REALTIME_RUNTIME_ENV });
    log(`  service: local runtime ready at ${runtime.baseUrl}`);
  } else {
    runtime.startConsumers();
    for (const [name, value] of Object.entries(REALTIME_RUNTIME_ENV)) {
      if (runtime.env[name] !== value && name !== 'CHAT_OPERATOR_KEY') {
        notes.push(
          `The runtime handed in has ${name}=${runtime.env[name] ?? '(unset)'}, not ${value}: rate limits may cap the service's figures.`,
        );
      }
    }
  }
  const live = runtime;
  const failed = (error: unknown): { result: TargetResult; cost: typeof cost } => ({
    result: {
      target: 'service',
      label: 'Service (local runtime)',
      software: 'local runtime',
      workloads: ['message', 'client'],
      connect: [],
      series: [],
      error: error instanceof Error ? error.message : String(error),
      seconds: round((performance.now() - started) / 1000, 1),
    },
    cost: { rows: [], error: 'the service leg did not start' },
  });
  try {
    let api: Api;
    let senderToken: string;
    let roomId: string;
    let tokens: string[];
    try {
      api = new ApiClient(live.baseUrl);
      const project = await createProject(api, 'bench realtime');
      senderToken = await project.token('rt-sender');
      roomId = uniqueId('rt-room');
      await api.expect(201, '/rooms', { token: senderToken, body: { id: roomId, type: 'public', members: [] } });
      const maxN = Math.max(...sizes);
      const tokensStarted = performance.now();
      tokens = await mapLimit(
        Array.from({ length: maxN }, (_, i) => i),
        16,
        (i) => project.token(`rt-r${i}`),
      );
      log(`  service: project, public room and ${maxN + 1} user tokens in ${round(performance.now() - tokensStarted, 0)} ms`);
    } catch (error) {
      return failed(error);
    }
    // Loaded only now: these modules read their settings from process.env, which the runtime set.
    const { dynamo } = await import('#shared/db/client');
    const { sqs } = await import('#shared/queue');
    const javaPid = childPid('java');
    let probeId = 1_000_000;
    const result = await measureTarget(
      {
        target: 'service',
        label: 'Service (local runtime)',
        software: `local runtime (gateway on ws ${versionOf('ws')}, handlers in process, DynamoDB Local, fauxqs ${versionOf('fauxqs')}); clients: ws, one user per receiver, public room`,
        workloads: ['message', 'client'],
        config: { kind: 'service', wsBase: live.baseUrl.replace(/^http/, 'ws'), roomId, senderToken, receiverTokens: tokens },
        serverCpuMs: () => ownCpuMs() + (processCpuMs(javaPid) ?? 0),
        afterSize: async (receivers, n) => {
          if (!costSizes.has(n)) return;
          const recorder = new Recorder();
          const detach = instrument({ dynamo, sqs }, recorder);
          try {
            for (const workload of ['message', 'client'] as const) {
              const row = await measureCost({
                runtime: live,
                recorder,
                receivers,
                receiverCount: n,
                workload,
                frames: costFrames,
                warmup: 3,
                probeTimeoutMs: 3000,
                nextId: () => probeId++,
              });
              cost.rows.push(row);
              log(
                `    cost ${workload} N=${n}: DynamoDB ${row.dynamo.requestsMedian} requests (mean ${row.dynamo.requestsMean}), ${row.dynamo.writeUnits} WU, ${row.dynamo.readUnits} RU; SQS ${row.sqs.handlers} + ${row.sqs.consumers}; Lambda ${row.lambdaInvocations}; PostToConnection ${row.postToConnection}; $${row.pricePerMillionTotal}/M`,
              );
            }
          } catch (error) {
            cost.error = error instanceof Error ? error.message : String(error);
            log(`    cost N=${n} failed: ${cost.error}`);
          } finally {
            detach();
          }
        },
      },
      sizes,
      settings,
      budget,
      log,
    );
    // measureTarget has closed the receivers: let the runtime finish their `$disconnect` work.
    const drain = new Recorder();
    const detachDrain = instrument({ dynamo, sqs }, drain, { capacity: false });
    try {
      if (!(await waitForSilence(live, () => drain.dynamo.length + drain.sqs.length, 30_000))) {
        notes.push('The service was still busy with the receivers’ departures 30 s after they closed.');
      }
    } finally {
      detachDrain();
    }
    if (cost.rows.length === 0 && !cost.error) cost.error = result.error ?? 'no cost was counted';
    return { result: { ...result, seconds: round((performance.now() - started) / 1000, 1) }, cost };
  } finally {
    if (owned) await live.stop().catch(() => undefined);
  }
}

function machine() {
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: round(totalmem() / 1024 ** 3, 1),
    node: process.version,
    loadAverageAtStart: round(loadavg()[0] ?? 0, 2),
  };
}

const seriesOf = (targets: readonly TargetResult[], target: TargetKind, workload: Workload, n: number) =>
  targets.find((t) => t.target === target)?.series.find((s) => s.workload === workload && s.receivers === n);

export function evaluateRealtimeGoals(targets: readonly TargetResult[], cost: readonly CostRow[]): RealtimeGoal[] {
  const goals: RealtimeGoal[] = [];
  const n = 100;
  const service = seriesOf(targets, 'service', 'client', n);
  const soketi = seriesOf(targets, 'soketi', 'client', n);
  const serviceMax = maxDeliveries(service);
  const soketiMax = maxDeliveries(soketi);
  const throughputRatio = serviceMax !== null && soketiMax ? serviceMax / soketiMax : null;
  goals.push({
    id: 'realtime.client.deliveries',
    name: `client-* deliveries/s at N = ${n}, service ÷ Soketi (highest rate with p99 ≤ 100 ms, all delivered)`,
    target: '≥ 0.5 ×',
    measured:
      throughputRatio === null
        ? `n/a (service ${serviceMax ?? 'none'}, Soketi ${soketiMax ?? 'none'})`
        : `${Number(throughputRatio.toPrecision(2))} × (${serviceMax} vs ${soketiMax} /s${soketi?.search.failedAt === null ? '; Soketi never failed, so its figure is a floor' : ''})`,
    pass: throughputRatio === null ? (serviceMax === null && soketiMax !== null ? false : null) : throughputRatio >= 0.5,
  });
  const serviceP99 = service?.fixed.latencyMs.p99;
  const soketiP99 = soketi?.fixed.latencyMs.p99;
  const p99Ratio = serviceP99 !== undefined && soketiP99 ? serviceP99 / soketiP99 : null;
  goals.push({
    id: 'realtime.client.p99',
    name: `client-* p99 at N = ${n} and the fixed rate, service ÷ Soketi`,
    target: '≤ 3 ×',
    measured: p99Ratio === null ? 'n/a' : `${Number(p99Ratio.toPrecision(3))} × (${serviceP99} vs ${soketiP99} ms)`,
    pass: p99Ratio === null ? null : p99Ratio <= 3 && (service?.fixed.deliveredShare ?? 0) === 1,
  });
  for (const workload of ['message', 'client'] as const) {
    const rows = cost.filter((row) => row.workload === workload).sort((a, b) => a.receivers - b.receivers);
    const first = rows[0];
    const last = rows.at(-1);
    const same =
      first !== undefined &&
      last !== undefined &&
      first !== last &&
      first.dynamo.requestsMedian === last.dynamo.requestsMedian &&
      Math.abs(first.dynamo.writeUnits - last.dynamo.writeUnits) <= 0.1 &&
      Math.abs(first.dynamo.readUnits - last.dynamo.readUnits) <= 0.1 + 0.05 * first.dynamo.readUnits;
    goals.push({
      id: `realtime.${workload}.dynamoFlat`,
      name: `DynamoDB work per ${workload === 'message' ? 'message' : 'client-* event'} independent of N`,
      target: 'same requests and units at every N',
      measured: rows.length
        ? rows
            .map((row) => `N=${row.receivers}: ${row.dynamo.requestsMedian} req, ${row.dynamo.writeUnits} WU, ${row.dynamo.readUnits} RU`)
            .join('; ')
        : 'n/a',
      pass: rows.length < 2 ? null : same,
    });
  }
  return goals;
}

/**
 * Runs the whole realtime bench: each target in turn (own server, own receivers child), then the
 * goals. Never throws for a target that fails: its error is in the result.
 */
export async function runRealtimeBench(options: RealtimeBenchOptions = {}): Promise<RealtimeBenchResult> {
  const started = performance.now();
  const log = options.log ?? ((line: string) => console.log(line));
  const sizes = [...(options.receivers ?? [10, 100, 1000])].sort((a, b) => a - b);
  const settings: MeasureSettings = { ...DEFAULT_SETTINGS, ...options.settings };
  const budgetSeconds = { ...DEFAULT_BUDGET, ...options.budgetSeconds };
  const wanted = new Set(options.targets ?? ['plain', 'soketi', 'service']);
  const machineInfo = machine();
  const notes: string[] = [];
  const targets: TargetResult[] = [];
  let cost: { rows: CostRow[]; error?: string } = { rows: [], error: 'the service leg was not run' };
  const guard = async (target: TargetKind, work: () => Promise<TargetResult>) => {
    log(`\n== Realtime: ${target}`);
    try {
      targets.push(await work());
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log(`  ${target}: failed to start: ${message}`);
      targets.push({ target, label: target, software: '', workloads: [], connect: [], series: [], error: message, seconds: 0 });
    }
  };
  if (wanted.has('plain')) await guard('plain', () => plainTarget(sizes, settings, budgetSeconds.plain, log));
  if (wanted.has('soketi')) await guard('soketi', () => soketiTarget(sizes, settings, budgetSeconds.soketi, log));
  if (wanted.has('service')) {
    await guard('service', async () => {
      const outcome = await serviceTarget(options, sizes, settings, budgetSeconds.service, log, notes);
      cost = outcome.cost;
      return outcome.result;
    });
  }
  const settingsNote = `no quiet ${settings.quietMs} ms within ${settings.quietMaxMs / 1000} s`;
  for (const target of targets) {
    for (const step of target.connect.filter((c) => c.missed.length > 0)) {
      notes.push(
        `${target.label}: after growing the room to ${step.receivers}, a check event did not reach ${step.missed[0]} of the receivers although each had been accepted${
          target.target === 'service' ? ' (had its `connected` frame)' : ''
        }; they were reopened (${step.missed.length} round${step.missed.length > 1 ? 's' : ''}${step.stillMissing ? `, ${step.stillMissing} never recovered` : ''}) before measuring. The server forgot live connections while the room filled up.`,
      );
    }
    for (const series of target.series) {
      const windows = [series.fixed, ...series.search.steps];
      if (windows.some((w) => w.receiversElu >= 0.9)) {
        notes.push(
          `${target.label}, ${series.workload}, N = ${series.receivers}: the receivers child's event loop was saturated (ELU ≥ 0.9) in some window, so the clients, not the server, may have set the limit there.`,
        );
      }
      const busiest = Math.max(0, ...windows.map((w) => w.otherCpuPercent ?? 0));
      if (busiest >= 25) {
        notes.push(
          `${target.label}, ${series.workload}, N = ${series.receivers}: other processes on the machine took up to ${busiest} % of one core during these windows; latencies there are worse than on a quiet machine.`,
        );
      }
      const unsettled = windows.filter((w) => !w.settled).length;
      if (unsettled > 0) {
        notes.push(
          `${target.label}, ${series.workload}, N = ${series.receivers}: ${unsettled} window(s) opened while frames of an earlier one were still arriving (${settingsNote}), so they also carried that backlog.`,
        );
      }
      if (windows.some((w) => w.duplicates > 0)) {
        notes.push(`${target.label}, ${series.workload}, N = ${series.receivers}: some frames were delivered twice to the same receiver.`);
      }
    }
  }
  return {
    generatedAt: new Date().toISOString(),
    seconds: round((performance.now() - started) / 1000, 1),
    machine: machineInfo,
    receivers: sizes,
    settings,
    budgetSeconds,
    targets,
    cost,
    goals: evaluateRealtimeGoals(targets, cost.rows),
    notes,
  };
}
