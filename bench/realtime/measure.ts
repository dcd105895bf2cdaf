/**
 * One target's measurements, the same for all three: for each room size N the receivers child
 * grows the room to N, then for each workload a window at the fixed offered rate and a short
 * search for the highest rate that still delivers everything with p99 ≤ the latency bound.
 */

import { machineBusyMs } from '../child-process';
import { round } from '../stats';
import type { RunResult, TargetKind, Workload } from './protocol';
import type { ReceiversProcess } from './receivers-process';

/** The bar a rate must clear in the search: every frame delivered, p99 at most this. */
export const P99_BOUND_MS = 100;

/** A window's figures: the counts and latencies the receivers child saw (latencies rounded), and what they add up to. */
export interface WindowFigures
  extends Pick<
    RunResult,
    'sent' | 'receivers' | 'expected' | 'delivered' | 'duplicates' | 'strays' | 'acks' | 'senderErrors' | 'latencyMs'
  > {
  /** Offered frames per second from the one sender. */
  readonly rate: number;
  readonly durationMs: number;
  /** delivered ÷ expected. */
  readonly deliveredShare: number;
  /** Deliveries over first send → last delivery, plus one frame interval. */
  readonly deliveriesPerSecond: number;
  /** Every frame delivered, p99 ≤ P99_BOUND_MS and no error frame to the sender. */
  readonly pass: boolean;
  /** The room was quiet when the window opened (false: it still carried an earlier window's backlog). */
  readonly settled: boolean;
  /** CPU of the server under test over the window, % of one core (all its processes). */
  readonly serverCpuPercent: number | null;
  readonly receiversCpuPercent: number;
  /**
   * Every other process on the machine over the window, % of one core (busy time from /proc/stat
   * minus the server and the receivers): well above 0, something else competed for the cores.
   */
  readonly otherCpuPercent: number | null;
  /** Event-loop utilization of the receivers child: near 1, the clients were the limit. */
  readonly receiversElu: number;
}

export interface SearchResult {
  readonly steps: readonly WindowFigures[];
  /** Highest passing rate seen (the fixed window included); null when none passed. */
  readonly maxRate: number | null;
  readonly atMax: WindowFigures | null;
  /** Lowest failing rate seen, if any: the limit lies between `maxRate` and it. */
  readonly failedAt: number | null;
  /** The search stopped on the time budget rather than on its step count or bracket. */
  readonly truncated: boolean;
  /**
   * It stopped because a failing window had no queueing (each frame delivered before the next was
   * sent): single-frame latency is over the bound, and no lower rate passes.
   */
  readonly latencyBound: boolean;
}

export interface SeriesResult {
  readonly target: TargetKind;
  readonly workload: Workload;
  readonly receivers: number;
  readonly fixed: WindowFigures;
  readonly search: SearchResult;
}

export interface MeasureSettings {
  /** Frames per second of the fixed window... */
  readonly fixedRate: number;
  /** ...but at most this many deliveries per second: rooms of 1000 get fixedDeliveries / 1000 frames/s. */
  readonly fixedDeliveries: number;
  readonly fixedWindowMs: number;
  readonly fixedDrainMs: number;
  readonly searchSteps: number;
  /** Rate multiplier of a search step while no bracket is known. */
  readonly searchFactor: number;
  /** Frames per search window (its length is clamped to searchWindowMs). */
  readonly searchFrames: number;
  readonly searchWindowMs: { readonly min: number; readonly max: number };
  readonly searchDrainMs: number;
  /** Before every window: no frame for this long (follow-ups and stragglers of the last window done). */
  readonly quietMs: number;
  readonly quietMaxMs: number;
}

let nextRunId = 1;

export function figures(
  rate: number,
  durationMs: number,
  result: RunResult,
  serverCpuMs: number | null,
  machineCpuMs: number | null,
  wallMs: number,
  settled: boolean,
): WindowFigures {
  const errors = Object.values(result.senderErrors).reduce((total, count) => total + count, 0);
  return {
    rate: round(rate, 2),
    durationMs,
    sent: result.sent,
    receivers: result.receivers,
    expected: result.expected,
    delivered: result.delivered,
    duplicates: result.duplicates,
    strays: result.strays,
    acks: result.acks,
    senderErrors: result.senderErrors,
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
    pass: result.complete && result.latencyMs.p99 <= P99_BOUND_MS && errors === 0,
    settled,
    serverCpuPercent: serverCpuMs === null ? null : round((serverCpuMs / wallMs) * 100, 0),
    receiversCpuPercent: round((result.cpuMs / wallMs) * 100, 0),
    otherCpuPercent:
      machineCpuMs === null || serverCpuMs === null
        ? null
        : round((Math.max(0, machineCpuMs - serverCpuMs - result.cpuMs) / wallMs) * 100, 0),
    receiversElu: round(result.eventLoopUtilization, 2),
  };
}

/** Runs one window after the room went quiet, with the server's CPU read around it. */
export async function measureWindow(
  receivers: ReceiversProcess,
  serverCpuMs: () => number | null,
  settings: MeasureSettings,
  workload: Workload,
  rate: number,
  durationMs: number,
  drainMs: number,
): Promise<WindowFigures> {
  const quiet = await receivers.quiet(settings.quietMs, settings.quietMaxMs);
  const cpuBefore = serverCpuMs();
  const machineBefore = machineBusyMs();
  const started = performance.now();
  const result = await receivers.run({ id: nextRunId++, workload, rate, durationMs, drainMs });
  const wallMs = performance.now() - started;
  const cpuAfter = serverCpuMs();
  const machineAfter = machineBusyMs();
  const server = cpuBefore === null || cpuAfter === null ? null : cpuAfter - cpuBefore;
  const machine = machineBefore === undefined || machineAfter === undefined ? null : machineAfter - machineBefore;
  return figures(rate, durationMs, result, server, machine, wallMs, quiet.quiet);
}

/** Highest rate that passed, in deliveries per second (rate × N). */
export const maxDeliveries = (series: SeriesResult | undefined): number | null =>
  series?.search.atMax ? series.search.atMax.rate * series.receivers : null;

/** The fixed window's rate at a room size. */
export const fixedRateFor = (settings: MeasureSettings, receivers: number) =>
  Math.min(settings.fixedRate, settings.fixedDeliveries / receivers);

/**
 * A failure no lower rate can fix: every frame was delivered before the next one was sent, so the
 * frames never queued behind each other and it is the latency of a single frame that is over.
 */
const latencyBound = (w: WindowFigures) => !w.pass && w.deliveredShare === 1 && w.latencyMs.max < 1000 / w.rate;

/** A rate to show: two significant digits at most, so steps read as 40, 160, 640. */
const niceRate = (rate: number) => Number(rate.toPrecision(2));

/**
 * The fixed window, then up to `searchSteps` more: ×factor up from a pass, ÷factor down from a
 * failure, and the geometric middle once a pass and a failure bracket the limit.
 */
export async function measureSeries(options: {
  readonly target: TargetKind;
  readonly workload: Workload;
  readonly receivers: ReceiversProcess;
  readonly receiverCount: number;
  readonly serverCpuMs: () => number | null;
  readonly settings: MeasureSettings;
  /** performance.now() after which no further search step starts. */
  readonly deadline: number;
  readonly log: (line: string) => void;
}): Promise<SeriesResult> {
  const { settings, workload, log } = options;
  const window = (rate: number, durationMs: number, drainMs: number) =>
    measureWindow(options.receivers, options.serverCpuMs, settings, workload, rate, durationMs, drainMs);
  const describe = (w: WindowFigures) =>
    `${w.rate}/s → ${w.deliveriesPerSecond} deliveries/s, p50 ${w.latencyMs.p50} p99 ${w.latencyMs.p99} ms, ${round(w.deliveredShare * 100, 2)} % delivered${
      Object.keys(w.senderErrors).length ? `, sender errors ${JSON.stringify(w.senderErrors)}` : ''
    } [${w.pass ? 'pass' : 'fail'}]`;

  const fixed = await window(fixedRateFor(settings, options.receiverCount), settings.fixedWindowMs, settings.fixedDrainMs);
  log(`    ${options.target} ${workload} N=${options.receiverCount} fixed ${describe(fixed)}`);
  let best: WindowFigures | null = fixed.pass ? fixed : null;
  let failedAt: number | null = fixed.pass ? null : fixed.rate;
  const steps: WindowFigures[] = [];
  let truncated = false;
  let floor = latencyBound(fixed);
  for (let step = 0; step < settings.searchSteps && !floor; step++) {
    if (performance.now() > options.deadline) {
      truncated = true;
      break;
    }
    const lo = best?.rate;
    const hi = failedAt ?? undefined;
    if (lo !== undefined && hi !== undefined && hi / lo < 1.3) break;
    const rate = niceRate(
      lo === undefined ? (hi as number) / settings.searchFactor : hi === undefined ? lo * settings.searchFactor : Math.sqrt(lo * hi),
    );
    if (rate <= 0) break;
    const durationMs = Math.min(settings.searchWindowMs.max, Math.max(settings.searchWindowMs.min, (settings.searchFrames / rate) * 1000));
    const result = await window(rate, durationMs, settings.searchDrainMs);
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
    target: options.target,
    workload,
    receivers: options.receiverCount,
    fixed,
    search: { steps, maxRate: best?.rate ?? null, atMax: best, failedAt, truncated, latencyBound: floor },
  };
}
