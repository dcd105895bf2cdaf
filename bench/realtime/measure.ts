/**
 * One target's measurements, the same for every server: its receivers child grows the room to each
 * N, then for each workload runs a window at the fixed offered rate and a short search for the
 * highest rate that still delivers everything with p99 ≤ the latency bound.
 */
import { forkIpc, machineBusyMs, round } from '../util';
import type { ReceiversApi, RunResult, TargetConfig, TargetKind, Workload } from './receivers';

export type Receivers = ReturnType<typeof forkIpc<ReceiversApi>>;

/** The bar a rate must clear in the search: every frame delivered, p99 at most this. */
export const P99_BOUND_MS = 100;

export const SETTINGS = {
  /** Frames per second of the fixed window... */
  fixedRate: 10,
  /** ...but at most this many deliveries per second: rooms of 1000 get fixedDeliveries / 1000 frames/s. */
  fixedDeliveries: 2000,
  /**
   * Frames of the fixed window, within at most fixedWindowMaxMs. A frame's deliveries arrive
   * together, so frames, not deliveries, are the independent samples of p99: at 20 frames it is
   * the slowest frame; at 100, the slowest 1 %.
   */
  fixedFrames: 100,
  fixedWindowMaxMs: 10_000,
  fixedDrainMs: 3000,
  searchSteps: 6,
  /** Rate multiplier of a search step while no bracket is known. */
  searchFactor: 4,
  /** Frames per search window (its length is clamped to searchWindowMs). */
  searchFrames: 20,
  searchWindowMs: { min: 1000, max: 2000 },
  searchDrainMs: 1000,
  /** Before every window: no frame for this long (follow-ups and stragglers of the last window done). */
  quietMs: 250,
  quietMaxMs: 12_000,
};

/** Growing the room: at most this many handshakes in flight, each within the timeout. */
export const CONNECT = { concurrency: 50, timeoutMs: 15_000 };

/**
 * The queued fan-out leg (`BENCH_QUEUED_RECEIVERS`, default 5,000; with Soketi only): after the
 * series, the same receivers child grows the room in waves to this many and sends one burst of
 * `client-*` events well above what either server delivers, so deliveries over first send → last
 * delivery is the server's delivery capacity at that size (no latency bound: on the service every
 * frame there goes through the realtime queue to the workers). Handshakes: `wave` at a time (each
 * socket's `$connect` reads the whole room, so a wave grows slower as the room fills), each within
 * `timeoutMs`; then a pause between waves so DynamoDB Local's queue drains.
 */
export const QUEUED = {
  defaultReceivers: 5000,
  wave: 500,
  concurrency: 50,
  timeoutMs: 60_000,
  pauseMs: 500,
  /** The burst: `frames` at `rate` per second, then up to `drainMs` for what is still missing. */
  rate: 20,
  frames: 30,
  drainMs: 60_000,
  /** Each server's room may take this long to grow; past it the leg stops with what it has. */
  growBudgetMs: 240_000,
};

/** The fixed window's rate at a room size. */
export const fixedRateFor = (receivers: number) => Math.min(SETTINGS.fixedRate, SETTINGS.fixedDeliveries / receivers);

/** How long the fixed window lasts at a room size. */
export const fixedWindowMsFor = (receivers: number) =>
  Math.min(SETTINGS.fixedWindowMaxMs, (SETTINGS.fixedFrames / fixedRateFor(receivers)) * 1000);

let nextRunId = 1;

/** A window's counts and latencies as the receivers child saw them, and what they add up to. */
function figures(
  rate: number,
  durationMs: number,
  result: RunResult,
  serverCpuMs: number | null,
  machineCpuMs: number | null,
  wallMs: number,
  settled: boolean,
) {
  const errors = Object.values(result.senderErrors).reduce((total, count) => total + count, 0);
  const percent = (ms: number | null) => (ms === null ? null : round((ms / wallMs) * 100, 0));
  const { sent, expected, delivered, duplicates, senderErrors } = result;
  return {
    /** Offered frames per second from the one sender. */
    rate: round(rate, 2),
    durationMs,
    ...{ sent, expected, delivered, duplicates, senderErrors },
    deliveredShare: result.expected ? round(result.delivered / result.expected, 4) : 0,
    // One frame interval added to first send → last delivery, so a window of k frames spans k
    // intervals plus the tail: a one-frame window reads rate × N, not N over one latency.
    deliveriesPerSecond: round(result.delivered / ((result.spanMs + 1000 / rate) / 1000), 0),
    latencyMs: {
      p50: round(result.latencyMs.p50, 2),
      p99: round(result.latencyMs.p99, 2),
      max: round(result.latencyMs.max, 2),
      mean: round(result.latencyMs.mean, 2),
    },
    /** Every frame delivered, p99 ≤ P99_BOUND_MS and no error frame to the sender. */
    pass: result.complete && result.latencyMs.p99 <= P99_BOUND_MS && errors === 0,
    /** The room was quiet when the window opened (false: it still carried an earlier window's backlog). */
    settled,
    /** CPU of the server under test over the window, % of one core (all its processes). */
    serverCpuPercent: percent(serverCpuMs),
    receiversCpuPercent: percent(result.cpuMs) as number,
    /** Every other process on the machine (busy time from /proc/stat minus the server and the receivers), % of one core. */
    otherCpuPercent: machineCpuMs === null || serverCpuMs === null ? null : percent(Math.max(0, machineCpuMs - serverCpuMs - result.cpuMs)),
    /** Event-loop utilization of the receivers child: near 1, the clients were the limit. */
    receiversElu: round(result.eventLoopUtilization, 2),
  };
}

export type WindowFigures = ReturnType<typeof figures>;

/** Runs one window after the room went quiet, with the server's CPU read around it. */
async function measureWindow(
  receivers: Receivers,
  serverCpuMs: () => number | null,
  workload: Workload,
  rate: number,
  durationMs: number,
  drainMs: number,
) {
  const quiet = await receivers.call('quiet', SETTINGS.quietMs, SETTINGS.quietMaxMs);
  const cpuBefore = serverCpuMs();
  const machineBefore = machineBusyMs();
  const started = performance.now();
  const count = Math.max(1, Math.round((rate * durationMs) / 1000));
  const result = await receivers.call('run', { id: nextRunId++, workload, rate, count, drainMs, acks: false });
  const wallMs = performance.now() - started;
  const cpuAfter = serverCpuMs();
  const machineAfter = machineBusyMs();
  const server = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
  const machine = machineBefore === undefined || machineAfter === undefined ? null : machineAfter - machineBefore;
  return figures(rate, durationMs, result, server, machine, wallMs, quiet.quiet);
}

/**
 * A failure no lower rate can fix: every frame was delivered before the next one was sent, so the
 * frames never queued behind each other and it is the latency of a single frame that is over.
 */
const latencyBound = (w: WindowFigures) => !w.pass && w.deliveredShare === 1 && w.latencyMs.max < 1000 / w.rate;

/**
 * The fixed window, then up to `searchSteps` more: ×factor up from a pass, ÷factor down from a
 * failure, and the geometric middle once a pass and a failure bracket the limit (a rate to show:
 * two significant digits at most, so steps read as 40, 160, 640).
 */
async function measureSeries(
  target: TargetKind,
  workload: Workload,
  receivers: Receivers,
  n: number,
  serverCpuMs: () => number | null,
  deadline: number,
  log: (line: string) => void,
) {
  const window = (rate: number, durationMs: number, drainMs: number) =>
    measureWindow(receivers, serverCpuMs, workload, rate, durationMs, drainMs);
  const describe = (w: WindowFigures) =>
    `${w.rate}/s → ${w.deliveriesPerSecond} deliveries/s, p50 ${w.latencyMs.p50} p99 ${w.latencyMs.p99} ms, ${round(w.deliveredShare * 100, 2)} % delivered${
      Object.keys(w.senderErrors).length ? `, sender errors ${JSON.stringify(w.senderErrors)}` : ''
    } [${w.pass ? 'pass' : 'fail'}]`;
  const fixed = await window(fixedRateFor(n), fixedWindowMsFor(n), SETTINGS.fixedDrainMs);
  log(`    ${target} ${workload} N=${n} fixed ${describe(fixed)}`);
  let best: WindowFigures | null = fixed.pass ? fixed : null;
  let failedAt: number | null = fixed.pass ? null : fixed.rate;
  const steps: WindowFigures[] = [];
  let truncated = false;
  let floor = latencyBound(fixed);
  for (let step = 0; step < SETTINGS.searchSteps && !floor; step++) {
    if (performance.now() > deadline) {
      truncated = true;
      break;
    }
    const lo = best?.rate;
    const hi = failedAt ?? undefined;
    if (lo !== undefined && hi !== undefined && hi / lo < 1.3) break;
    const next =
      lo === undefined ? (hi as number) / SETTINGS.searchFactor : hi === undefined ? lo * SETTINGS.searchFactor : Math.sqrt(lo * hi);
    const rate = Number(next.toPrecision(2));
    if (rate <= 0) break;
    const durationMs = Math.min(SETTINGS.searchWindowMs.max, Math.max(SETTINGS.searchWindowMs.min, (SETTINGS.searchFrames / rate) * 1000));
    const result = await window(rate, durationMs, SETTINGS.searchDrainMs);
    steps.push(result);
    log(`      step ${describe(result)}`);
    if (result.pass) {
      if (!best || result.rate > best.rate) best = result;
    } else {
      if (failedAt === null || result.rate < failedAt) failedAt = result.rate;
      floor = latencyBound(result) && !best;
    }
  }
  return {
    target,
    workload,
    receivers: n,
    fixed,
    search: {
      steps,
      /** Highest passing rate seen (the fixed window included); null when none passed. */
      maxRate: best?.rate ?? null,
      atMax: best,
      /** Lowest failing rate seen, if any: the limit lies between `maxRate` and it. */
      failedAt,
      /** The search stopped on the time budget rather than on its step count or bracket. */
      truncated,
      /** It stopped because a failing window had no queueing: single-frame latency is over the bound, and no lower rate passes. */
      latencyBound: floor,
    },
  };
}

export type Series = Awaited<ReturnType<typeof measureSeries>>;

/** Highest rate that passed, in deliveries per second (rate × N). */
export const maxDeliveries = (series: Series | undefined): number | null =>
  series?.search.atMax ? series.search.atMax.rate * series.receivers : null;

/** What a target is and how to measure it. */
interface TargetPlan {
  readonly target: TargetKind;
  readonly label: string;
  /** What ran, with versions. */
  readonly software: string;
  readonly workloads: readonly Workload[];
  readonly config: TargetConfig;
  /** CPU so far of the server under test's processes, in ms. */
  readonly serverCpuMs: () => number | null;
  /** Seconds the target may spend before its searches stop taking steps (fixed-rate windows always run). */
  readonly budgetSeconds: number;
  /** After the series at one N: the service counts its AWS work there. */
  readonly afterSize?: (receivers: Receivers, n: number) => Promise<void>;
  /**
   * After the series at one N, before `afterSize`: another target measured beside this one at the
   * same N (the service over the Pusher protocol), on its own receivers child and its own budget, so
   * its time does not count against this target's.
   */
  readonly beside?: (n: number) => Promise<void>;
  /** After every size: grow to this many receivers in waves and send one saturating burst (QUEUED). */
  readonly queued?: {
    readonly receivers: number;
    /** A running count of the server's queued fan-out jobs (the service's realtime queue), read around the burst. */
    readonly queuedJobs?: () => number;
  };
}

/**
 * The queued fan-out leg: grows the room in waves of QUEUED.wave to `n`, then one burst. Answers
 * what it measured, or why it stopped.
 */
async function measureQueued(
  receivers: Receivers,
  from: number,
  n: number,
  serverCpuMs: () => number | null,
  queuedJobs: (() => number) | undefined,
  target: TargetKind,
  log: (line: string) => void,
) {
  const started = performance.now();
  const waves: { receivers: number; ms: number; missed: number[]; stillMissing: number }[] = [];
  // The room already holds the series' largest size.
  let current = from;
  while (current < n) {
    if (performance.now() - started > QUEUED.growBudgetMs)
      throw new Error(`the room held ${current} receivers after ${Math.round(QUEUED.growBudgetMs / 1000)} s of growing (wave budget)`);
    const next = Math.min(n, Math.max(QUEUED.wave, Math.ceil((current + 1) / QUEUED.wave) * QUEUED.wave));
    const step = await receivers.call('grow', next, {
      concurrency: QUEUED.concurrency,
      timeoutMs: QUEUED.timeoutMs,
      quietMs: SETTINGS.quietMs * 2,
    });
    waves.push({ receivers: next, ms: round(step.ms, 0), missed: step.missed, stillMissing: step.stillMissing });
    log(
      `  ${target} queued: ${next} receivers (wave in ${round(step.ms, 0)} ms${step.missed.length ? `; reopened ${step.missed.join(', ')}` : ''})`,
    );
    current = next;
    await new Promise((resolve) => setTimeout(resolve, QUEUED.pauseMs));
  }
  const connectMs = round(performance.now() - started, 0);
  const jobsBefore = queuedJobs?.();
  const durationMs = (QUEUED.frames / QUEUED.rate) * 1000;
  const burst = await measureWindow(receivers, serverCpuMs, 'client', QUEUED.rate, durationMs, QUEUED.drainMs);
  const jobs = jobsBefore === undefined ? null : (queuedJobs?.() ?? 0) - jobsBefore;
  log(
    `    ${target} client N=${n} burst ${burst.rate}/s × ${burst.sent} → ${burst.deliveriesPerSecond} deliveries/s, p50 ${burst.latencyMs.p50} p99 ${burst.latencyMs.p99} ms, ${round(burst.deliveredShare * 100, 2)} % delivered; server CPU ${burst.serverCpuPercent} %, receivers ${burst.receiversCpuPercent} % (ELU ${burst.receiversElu})${jobs === null ? '' : `; ${jobs} queued fan-out jobs`}`,
  );
  return { receivers: n, connectMs, waves, burst, queuedJobs: jobs };
}

export type QueuedResult = Awaited<ReturnType<typeof measureQueued>>;

/** Grows the room through every N (its own receivers child) and measures each workload there; keeps what it got on failure. */
export async function measureTarget(plan: TargetPlan, sizes: readonly number[], log: (line: string) => void) {
  const started = performance.now();
  let deadline = started + plan.budgetSeconds * 1000;
  let besideMs = 0;
  const connect = [];
  const series: Series[] = [];
  let queued: QueuedResult | { receivers: number; error: string } | undefined;
  let error: string | undefined;
  const receivers = forkIpc<ReceiversApi>('bench/realtime/receivers.ts', 'receivers', 5000);
  try {
    await receivers.call('configure', plan.config);
    for (const n of sizes) {
      /**
       * ms: every new socket ready (open, subscribed, or its `connected` frame received); settleMs: then
       * until no frame came for a while; missed: receivers a check event then did not reach, per round
       * (each round reopens them): the server dropped live connections while the room filled up.
       */
      const step = await receivers.call('grow', n, { ...CONNECT, quietMs: SETTINGS.quietMs * 2 });
      connect.push({ receivers: n, ...step, ms: round(step.ms, 0), settleMs: round(step.settleMs, 0) });
      const missed = step.missed.length
        ? `; a check event missed ${step.missed.join(', then ')} of them (reopened), ${step.stillMissing} still missed`
        : '';
      log(
        `  ${plan.target}: ${n} receivers connected in ${round(step.ms, 0)} ms (then ${round(step.settleMs, 0)} ms until quiet)${missed}`,
      );
      for (const workload of plan.workloads)
        series.push(await measureSeries(plan.target, workload, receivers, n, plan.serverCpuMs, deadline, log));
      if (plan.beside) {
        const besideStarted = performance.now();
        await plan.beside(n);
        besideMs += performance.now() - besideStarted;
        deadline += performance.now() - besideStarted;
      }
      await plan.afterSize?.(receivers, n);
    }
    if (plan.queued) {
      const n = plan.queued.receivers;
      queued = await measureQueued(receivers, Math.max(0, ...sizes), n, plan.serverCpuMs, plan.queued.queuedJobs, plan.target, log).catch(
        (caught: unknown) => {
          const why = caught instanceof Error ? caught.message : String(caught);
          log(`  ${plan.target} queued: stopped: ${why}`);
          return { receivers: n, error: why };
        },
      );
    }
  } catch (caught) {
    error = caught instanceof Error ? caught.message : String(caught);
    log(`  ${plan.target}: stopped: ${error}`);
  } finally {
    await receivers.stop().catch(() => undefined);
  }
  const { target, label, software, workloads } = plan;
  return {
    target,
    label,
    software,
    workloads,
    connect,
    series,
    ...(queued ? { queued } : {}),
    ...(error ? { error } : {}),
    seconds: round((performance.now() - started - besideMs) / 1000, 1),
  };
}

export type TargetResult = Awaited<ReturnType<typeof measureTarget>>;
