/**
 * Figure 2: POST /messages throughput and latency through the local runtime over real HTTP, next
 * to the raw PutItem rate of the same DynamoDB Local at the same concurrency, in the same run.
 * Closed loop: N senders each send, wait for the answer, and send again. The senders of both
 * workloads run in a child process (bench/load-generator.ts), never in the process that hosts the
 * service, and each process's CPU is accounted separately.
 */
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { childPid, IpcChild, machineBusyMs, processCpuMs } from './child-process';
import { type Api, createProject, uniqueId } from './client';
import { instrument, itemSize, Recorder } from './instrument';
import { type FromGenerator, type GeneratorWindow, type LoadTarget, messageLikeItem, type ToGenerator, type Workload } from './load';
import { mean, percentile, round, sum } from './stats';

export interface LoadResult {
  readonly concurrency: number;
  readonly operations: number;
  readonly errors: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly latencyMs: { readonly mean: number; readonly p50: number; readonly p99: number };
  /**
   * CPU used during the window, in % of one core (200 % = both cores of this machine): the service
   * (bench process: gateway, handlers, SQS stand-in), the load generator (child process), DynamoDB
   * Local (java) and `other`, every other process on the machine.
   */
  readonly cpu: { readonly service: number; readonly loadGenerator: number; readonly java: number | null; readonly other: number | null };
  /** CPU time per operation in ms, by process. */
  readonly cpuMsPerOp: { readonly service: number; readonly loadGenerator: number; readonly java: number | null };
  /** Share of the window each process's main thread was busy (1 = saturated). */
  readonly eventLoopUtilization: { readonly service: number; readonly loadGenerator: number };
}

/** Where the time of a message goes at a given concurrency (a separate, instrumented window). */
export interface MessageProfile {
  readonly concurrency: number;
  readonly messages: number;
  readonly latencyMs: number;
  /** Per message: requests and mean duration of each SDK call, by command. */
  readonly calls: readonly {
    readonly service: 'DynamoDB' | 'SQS';
    readonly command: string;
    readonly perMessage: number;
    readonly meanMs: number;
  }[];
  /** Per message: summed time inside SDK calls (DynamoDB and SQS). */
  readonly sdkMs: number;
  /** The service process's event loop. */
  readonly eventLoopUtilization: number;
}

export interface ThroughputRow {
  readonly concurrency: number;
  readonly messages: LoadResult;
  readonly rawPutItem: LoadResult;
  /** messages/s ÷ raw PutItem/s. */
  readonly ratio: number;
}

export interface ThroughputResult {
  readonly jvmWarmupSeconds: number;
  readonly warmupSeconds: number;
  readonly measureSeconds: number;
  readonly profileSeconds: number;
  readonly rows: ThroughputRow[];
  readonly profiles: MessageProfile[];
  /** Item sizes (DynamoDB rules) of a stored message and of the raw PutItem item. */
  readonly itemBytes: { readonly message: number; readonly raw: number };
}

/**
 * The load-generator child: `node --import tsx bench/load-generator.ts`, driven over IPC one
 * command at a time.
 */
class LoadGenerator extends IpcChild<ToGenerator, FromGenerator> {
  static async start(target: LoadTarget): Promise<LoadGenerator> {
    const script = join(dirname(fileURLToPath(import.meta.url)), 'load-generator.ts');
    const generator = new LoadGenerator(LoadGenerator.forkTsx(script), 'load generator', 2000);
    await generator.call({ type: 'configure', target }, 'configured');
    return generator;
  }

  /** Unmeasured load; returns when no call is in flight any more. */
  async warm(workload: Workload, concurrency: number, ms: number): Promise<void> {
    await this.call({ type: 'warm', workload, concurrency, ms }, 'warmed');
  }

  async measure(workload: Workload, concurrency: number, ms: number): Promise<GeneratorWindow> {
    return (await this.call({ type: 'measure', workload, concurrency, ms }, 'measured')).window;
  }
}

/** One measured window, raw, so windows of the same workload can be merged. */
interface Window {
  readonly load: GeneratorWindow;
  /** Wall time the service side watched the window (the generator's window plus the IPC round trip). */
  readonly wallMs: number;
  readonly serviceCpuMs: number;
  readonly javaCpuMs: number | undefined;
  readonly eluActive: number;
  readonly eluIdle: number;
  /** CPU used by every other process on the machine during the window. */
  readonly otherCpuMs: number | undefined;
}

/**
 * A warm-up, then a measured window whose calls are all counted whole: no call is in flight when
 * the window opens, and it closes when the last call started inside it returns. The load runs in
 * the generator; this (service) process only takes the CPU and event-loop readings around it.
 */
async function measureWindow(
  generator: LoadGenerator,
  workload: Workload,
  concurrency: number,
  warmupMs: number,
  measureMs: number,
  onMeasureStart?: () => void,
): Promise<Window> {
  await generator.warm(workload, concurrency, warmupMs);
  onMeasureStart?.();
  const javaPid = childPid('java');
  const javaBefore = processCpuMs(javaPid);
  const serviceBefore = process.cpuUsage();
  const eluBefore = performance.eventLoopUtilization();
  const machineBefore = machineBusyMs();
  const started = performance.now();
  const load = await generator.measure(workload, concurrency, measureMs);
  const wallMs = performance.now() - started;
  const serviceUsed = process.cpuUsage(serviceBefore);
  const elu = performance.eventLoopUtilization(eluBefore);
  const javaAfter = processCpuMs(javaPid);
  const machineAfter = machineBusyMs();
  const serviceCpuMs = (serviceUsed.user + serviceUsed.system) / 1000;
  const javaCpuMs = javaBefore !== undefined && javaAfter !== undefined ? javaAfter - javaBefore : undefined;
  return {
    load,
    wallMs,
    serviceCpuMs,
    javaCpuMs,
    eluActive: elu.active,
    eluIdle: elu.idle,
    otherCpuMs:
      machineBefore !== undefined && machineAfter !== undefined && javaCpuMs !== undefined
        ? Math.max(0, machineAfter - machineBefore - serviceCpuMs - load.cpuMs - javaCpuMs)
        : undefined,
  };
}

function summarizeWindows(concurrency: number, windows: readonly Window[]): LoadResult {
  const latencies = windows.flatMap((w) => w.load.latencies);
  const failures = sum(windows.map((w) => w.load.failures));
  const elapsedMs = sum(windows.map((w) => w.load.elapsedMs));
  const wallMs = sum(windows.map((w) => w.wallMs));
  const serviceMs = sum(windows.map((w) => w.serviceCpuMs));
  const loadMs = sum(windows.map((w) => w.load.cpuMs));
  const javaMs = windows.every((w) => w.javaCpuMs !== undefined) ? sum(windows.map((w) => w.javaCpuMs ?? 0)) : undefined;
  const otherMs = windows.every((w) => w.otherCpuMs !== undefined) ? sum(windows.map((w) => w.otherCpuMs ?? 0)) : undefined;
  const utilization = (active: number, idle: number) => round(active + idle > 0 ? active / (active + idle) : 0, 2);
  const ops = Math.max(1, latencies.length);
  const percent = (ms: number) => round((ms / wallMs) * 100, 0);
  return {
    concurrency,
    operations: latencies.length,
    errors: failures,
    seconds: round(elapsedMs / 1000, 3),
    perSecond: round(((latencies.length - failures) * 1000) / elapsedMs, 1),
    latencyMs: { mean: round(mean(latencies)), p50: round(percentile(latencies, 50)), p99: round(percentile(latencies, 99)) },
    cpu: {
      service: percent(serviceMs),
      // Measured over the generator's own window, which the service's contains.
      loadGenerator: round((loadMs / elapsedMs) * 100, 0),
      java: javaMs === undefined ? null : percent(javaMs),
      other: otherMs === undefined ? null : percent(otherMs),
    },
    cpuMsPerOp: {
      service: round(serviceMs / ops, 3),
      loadGenerator: round(loadMs / ops, 3),
      java: javaMs === undefined ? null : round(javaMs / ops, 3),
    },
    eventLoopUtilization: {
      service: utilization(sum(windows.map((w) => w.eluActive)), sum(windows.map((w) => w.eluIdle))),
      loadGenerator: utilization(sum(windows.map((w) => w.load.eluActive)), sum(windows.map((w) => w.load.eluIdle))),
    },
  };
}

export interface ThroughputOptions {
  readonly api: Api;
  /** The handlers' own clients, timed (not counted for capacity) in the profile windows only. */
  readonly clients: { readonly dynamo: DynamoDBClient; readonly sqs: SQSClient };
  readonly jvmWarmupMs: number;
  readonly profileMs: number;
  readonly dynamoEndpoint: string;
  readonly tableName: string;
  readonly concurrencies: readonly number[];
  readonly warmupMs: number;
  readonly measureMs: number;
  readonly log: (line: string) => void;
}

export async function measureThroughput(options: ThroughputOptions): Promise<ThroughputResult> {
  const { api, concurrencies, warmupMs, measureMs, log } = options;
  const maxSenders = Math.max(...concurrencies);
  const project = await createProject(api, 'bench throughput');
  const senders = Array.from({ length: maxSenders }, (_, i) => `sender-${i}`);
  // One busy group room; every sender is its own user so the per-user rate limit never mixes them.
  const roomId = uniqueId('busy');
  const owner = await project.token(senders[0] as string);
  await api.expect(201, '/rooms', { token: owner, body: { id: roomId, type: 'group', members: senders.slice(1) } });
  const tokens = await Promise.all(senders.map((sender) => project.token(sender)));

  const generator = await LoadGenerator.start({
    baseUrl: api.baseUrl,
    tokens,
    roomId,
    dynamoEndpoint: options.dynamoEndpoint,
    tableName: options.tableName,
  });
  log(`  load generator: child process ${generator.pid}`);
  const rows: ThroughputRow[] = [];
  const profiles: MessageProfile[] = [];
  try {
    // DynamoDB Local's JIT keeps speeding up for several seconds of load: get past that first
    // (this also warms the generator's own HTTP pool and SDK client).
    await generator.warm('messages', maxSenders, options.jvmWarmupMs / 2);
    await generator.warm('rawPutItem', maxSenders, options.jvmWarmupMs / 2);
    for (const concurrency of concurrencies) {
      // ABBA order, two half windows each: a slow drift (JIT, GC, table growth) hits both workloads alike.
      const half = measureMs / 2;
      const window = (workload: Workload) => measureWindow(generator, workload, concurrency, warmupMs / 2, half);
      const rawWindows = [await window('rawPutItem')];
      const messageWindows = [await window('messages')];
      messageWindows.push(await window('messages'));
      rawWindows.push(await window('rawPutItem'));
      const rawPutItem = summarizeWindows(concurrency, rawWindows);
      const messages = summarizeWindows(concurrency, messageWindows);
      for (const [name, r] of [
        ['raw PutItem', rawPutItem],
        ['POST /messages', messages],
      ] as const) {
        log(
          `  ${name} ×${concurrency}: ${r.perSecond}/s p50 ${r.latencyMs.p50} ms (${r.errors} errors); CPU % service ${r.cpu.service}, load generator ${r.cpu.loadGenerator}, java ${r.cpu.java}, other ${r.cpu.other}`,
        );
      }
      rows.push({ concurrency, messages, rawPutItem, ratio: round(messages.perSecond / rawPutItem.perSecond, 3) });
    }
    for (const concurrency of concurrencies) {
      profiles.push(await profileMessages(options, generator, concurrency));
      const profile = profiles.at(-1) as MessageProfile;
      log(`  profile ×${concurrency}: ${profile.latencyMs} ms per message, ${profile.sdkMs} ms in SDK calls`);
    }
  } finally {
    await generator.stop();
  }
  const sampleId = Date.now() * 1000;
  return {
    jvmWarmupSeconds: options.jvmWarmupMs / 1000,
    warmupSeconds: warmupMs / 1000,
    measureSeconds: measureMs / 1000,
    profileSeconds: options.profileMs / 1000,
    rows,
    profiles,
    itemBytes: {
      message: itemSize(messageLikeItem(project.projectId, roomId, senders[0] as string, sampleId)),
      raw: itemSize(messageLikeItem('bench-raw', 'raw-room', 'sender-0', sampleId)),
    },
  };
}

/**
 * A separate window with timing middleware on the handlers' clients: how many SDK calls a message
 * makes at this concurrency and how long each takes, beside the message's own latency.
 */
async function profileMessages(options: ThroughputOptions, generator: LoadGenerator, concurrency: number) {
  const recorder = new Recorder();
  const detach = instrument(options.clients, recorder, { capacity: false });
  try {
    const window = await measureWindow(generator, 'messages', concurrency, options.warmupMs / 2, options.profileMs, () => recorder.clear());
    return summarizeProfile(concurrency, summarizeWindows(concurrency, [window]), recorder);
  } finally {
    detach();
  }
}

function summarizeProfile(concurrency: number, result: LoadResult, recorder: Recorder): MessageProfile {
  const messages = Math.max(1, result.operations);
  const groups = new Map<string, { service: 'DynamoDB' | 'SQS'; command: string; ms: number[] }>();
  const add = (service: 'DynamoDB' | 'SQS', command: string, ms: number) => {
    const key = `${service}:${command}`;
    const group = groups.get(key) ?? { service, command: command.replace(/Command$/, ''), ms: [] };
    group.ms.push(ms);
    groups.set(key, group);
  };
  for (const call of recorder.dynamo) add('DynamoDB', call.command, call.ms);
  for (const call of recorder.sqs) add('SQS', call.command, call.ms);
  const calls = [...groups.values()]
    .map((g) => ({ service: g.service, command: g.command, perMessage: round(g.ms.length / messages, 2), meanMs: round(mean(g.ms), 2) }))
    .filter((c) => c.perMessage >= 0.01)
    .sort((a, b) => b.perMessage * b.meanMs - a.perMessage * a.meanMs);
  const total = sum(recorder.dynamo.map((c) => c.ms)) + sum(recorder.sqs.map((c) => c.ms));
  return {
    concurrency,
    messages: result.operations,
    latencyMs: result.latencyMs.mean,
    calls,
    sdkMs: round(total / messages, 2),
    eventLoopUtilization: result.eventLoopUtilization.service,
  };
}
