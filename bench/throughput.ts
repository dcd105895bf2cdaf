/**
 * Figure 2: POST /messages throughput and latency through the local runtime over real HTTP, next
 * to the raw PutItem rate of the same DynamoDB Local at the same concurrency, in the same run.
 * Closed loop: N workers each send, wait for the answer, and send again.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { type AttributeValue, DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { type Api, createProject, MESSAGE_CONTENT, uniqueId } from './client';
import { instrument, itemSize, Recorder } from './instrument';
import { mean, percentile, round, sum } from './stats';

export interface LoadResult {
  readonly concurrency: number;
  readonly operations: number;
  readonly errors: number;
  readonly seconds: number;
  readonly perSecond: number;
  readonly latencyMs: { readonly mean: number; readonly p50: number; readonly p99: number };
  /** CPU used during the window, in % of one core (200 % = both cores of this machine); `other`: every other process. */
  readonly cpu: { readonly node: number; readonly java: number | null; readonly other: number | null };
  /** CPU time per operation in ms: bench process (client, gateway, handlers, SQS stand-in) and DynamoDB Local. */
  readonly cpuMsPerOp: { readonly node: number; readonly java: number | null };
  /** Share of the window the bench process's event loop was busy (1 = saturated main thread). */
  readonly eventLoopUtilization: number;
}

/** Where the time of one message goes at a given concurrency (a separate, instrumented window). */
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

const clockTicks = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** DynamoDB Local is a `java` child of this process (started by the local runtime). */
function javaChildPid(): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const afterName = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (stat.includes('(java)') && Number(afterName[1]) === process.pid) return Number(entry);
    } catch {
      // The process ended while we looked.
    }
  }
  return undefined;
}

function cpuTicks(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return undefined;
  }
}

/** Busy CPU time of the whole machine so far, in ms (all cores: user, nice, system, irq, softirq, steal). */
function machineBusyMs(): number | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
    return ((user + nice + system + irq + softirq + steal) / clockTicks) * 1000;
  } catch {
    return undefined;
  }
}

/** Keeps `concurrency` workers calling `op` until `deadline`; latencies and failures of every call are kept if asked. */
async function runUntil(
  concurrency: number,
  deadline: number,
  op: (worker: number) => Promise<boolean>,
  latencies?: number[],
  failures?: { count: number },
): Promise<void> {
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (performance.now() < deadline) {
        const started = performance.now();
        let ok = false;
        try {
          ok = await op(worker);
        } catch {
          ok = false;
        }
        if (!ok && failures) failures.count++;
        latencies?.push(performance.now() - started);
      }
    }),
  );
}

/** One measured window, raw, so windows of the same workload can be merged. */
interface Window {
  readonly latencies: number[];
  readonly failures: number;
  readonly elapsedMs: number;
  readonly nodeCpuMs: number;
  readonly javaCpuMs: number | undefined;
  readonly eluActive: number;
  readonly eluIdle: number;
  /** CPU used by every other process on the machine during the window. */
  readonly otherCpuMs: number | undefined;
}

/**
 * A warm-up, then a measured window whose calls are all counted whole: no call is in flight when
 * the window opens, and it closes when the last call started inside it returns.
 */
async function measureWindow(
  concurrency: number,
  warmupMs: number,
  measureMs: number,
  op: (worker: number) => Promise<boolean>,
  onMeasureStart?: () => void,
): Promise<Window> {
  await runUntil(concurrency, performance.now() + warmupMs, op);
  onMeasureStart?.();
  const javaPid = javaChildPid();
  const javaBefore = cpuTicks(javaPid);
  const nodeBefore = process.cpuUsage();
  const eluBefore = performance.eventLoopUtilization();
  const machineBefore = machineBusyMs();
  const latencies: number[] = [];
  const failures = { count: 0 };
  const started = performance.now();
  await runUntil(concurrency, started + measureMs, op, latencies, failures);
  const elapsedMs = performance.now() - started;
  const nodeUsed = process.cpuUsage(nodeBefore);
  const elu = performance.eventLoopUtilization(eluBefore);
  const javaAfter = cpuTicks(javaPid);
  const machineAfter = machineBusyMs();
  const nodeCpuMs = (nodeUsed.user + nodeUsed.system) / 1000;
  const javaCpuMs = javaBefore !== undefined && javaAfter !== undefined ? ((javaAfter - javaBefore) / clockTicks) * 1000 : undefined;
  return {
    latencies,
    failures: failures.count,
    elapsedMs,
    nodeCpuMs,
    javaCpuMs,
    eluActive: elu.active,
    eluIdle: elu.idle,
    otherCpuMs:
      machineBefore !== undefined && machineAfter !== undefined && javaCpuMs !== undefined
        ? Math.max(0, machineAfter - machineBefore - nodeCpuMs - javaCpuMs)
        : undefined,
  };
}

function summarizeWindows(concurrency: number, windows: readonly Window[]): LoadResult {
  const latencies = windows.flatMap((w) => w.latencies);
  const failures = sum(windows.map((w) => w.failures));
  const elapsedMs = sum(windows.map((w) => w.elapsedMs));
  const nodeMs = sum(windows.map((w) => w.nodeCpuMs));
  const javaMs = windows.every((w) => w.javaCpuMs !== undefined) ? sum(windows.map((w) => w.javaCpuMs ?? 0)) : undefined;
  const active = sum(windows.map((w) => w.eluActive));
  const idle = sum(windows.map((w) => w.eluIdle));
  const ops = Math.max(1, latencies.length);
  const otherMs = windows.every((w) => w.otherCpuMs !== undefined) ? sum(windows.map((w) => w.otherCpuMs ?? 0)) : undefined;
  return {
    concurrency,
    operations: latencies.length,
    errors: failures,
    seconds: round(elapsedMs / 1000, 3),
    perSecond: round(((latencies.length - failures) * 1000) / elapsedMs, 1),
    latencyMs: { mean: round(mean(latencies)), p50: round(percentile(latencies, 50)), p99: round(percentile(latencies, 99)) },
    cpu: {
      node: round((nodeMs / elapsedMs) * 100, 0),
      java: javaMs === undefined ? null : round((javaMs / elapsedMs) * 100, 0),
      other: otherMs === undefined ? null : round((otherMs / elapsedMs) * 100, 0),
    },
    cpuMsPerOp: { node: round(nodeMs / ops, 3), java: javaMs === undefined ? null : round(javaMs / ops, 3) },
    eventLoopUtilization: round(active + idle > 0 ? active / (active + idle) : 0, 2),
  };
}

/** Runs `op` from `concurrency` workers: a warm-up, then one measured window. */
export async function closedLoop(
  concurrency: number,
  warmupMs: number,
  measureMs: number,
  op: (worker: number) => Promise<boolean>,
  onMeasureStart?: () => void,
): Promise<LoadResult> {
  return summarizeWindows(concurrency, [await measureWindow(concurrency, warmupMs, measureMs, op, onMeasureStart)]);
}

/** A stored message item as `functions/shared/db/message.ts` writes it, marshalled. */
export function messageLikeItem(projectId: string, roomId: string, userId: string, id: number): Record<string, AttributeValue> {
  return {
    pk: { S: `P#${projectId}#R#${roomId}#MSGS` },
    sk: { S: `MSG#${String(id).padStart(16, '0')}` },
    id: { N: String(id) },
    projectId: { S: projectId },
    roomId: { S: roomId },
    userId: { S: userId },
    content: { S: MESSAGE_CONTENT },
    parent_id: { NULL: true },
    attachments: { L: [] },
    clientMessageId: { NULL: true },
    createdAt: { S: new Date(Math.floor(id / 1000)).toISOString() },
    moderation: { NULL: true },
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

  const raw = new DynamoDBClient({
    endpoint: options.dynamoEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  let rawSeq = 0;
  const rawBase = Date.now() * 1000;
  const rawPut = async () => {
    await raw.send(
      new PutItemCommand({ TableName: options.tableName, Item: messageLikeItem('bench-raw', 'raw-room', 'sender-0', rawBase + rawSeq++) }),
    );
    return true;
  };
  const sendMessage = async (worker: number) => {
    const result = await api.request('/messages', { token: tokens[worker], body: { roomId, content: MESSAGE_CONTENT } });
    return result.status === 201;
  };

  const rows: ThroughputRow[] = [];
  const profiles: MessageProfile[] = [];
  try {
    // DynamoDB Local's JIT keeps speeding up for several seconds of load: get past that first.
    await runUntil(maxSenders, performance.now() + options.jvmWarmupMs / 2, sendMessage);
    await runUntil(maxSenders, performance.now() + options.jvmWarmupMs / 2, rawPut);
    for (const concurrency of concurrencies) {
      // ABBA order, two half windows each: a slow drift (JIT, GC, table growth) hits both workloads alike.
      const half = measureMs / 2;
      const rawWindows = [await measureWindow(concurrency, warmupMs / 2, half, rawPut)];
      const messageWindows = [await measureWindow(concurrency, warmupMs / 2, half, sendMessage)];
      messageWindows.push(await measureWindow(concurrency, warmupMs / 2, half, sendMessage));
      rawWindows.push(await measureWindow(concurrency, warmupMs / 2, half, rawPut));
      const rawPutItem = summarizeWindows(concurrency, rawWindows);
      const messages = summarizeWindows(concurrency, messageWindows);
      log(`  raw PutItem ×${concurrency}: ${rawPutItem.perSecond}/s p50 ${rawPutItem.latencyMs.p50} ms`);
      log(`  POST /messages ×${concurrency}: ${messages.perSecond}/s p50 ${messages.latencyMs.p50} ms (${messages.errors} errors)`);
      rows.push({ concurrency, messages, rawPutItem, ratio: round(messages.perSecond / rawPutItem.perSecond, 3) });
    }
    for (const concurrency of concurrencies) {
      profiles.push(await profileMessages(options, concurrency, sendMessage));
      const profile = profiles.at(-1) as MessageProfile;
      log(`  profile ×${concurrency}: ${profile.latencyMs} ms per message, ${profile.sdkMs} ms in SDK calls`);
    }
  } finally {
    raw.destroy();
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
async function profileMessages(options: ThroughputOptions, concurrency: number, send: (worker: number) => Promise<boolean>) {
  const recorder = new Recorder();
  const detach = instrument(options.clients, recorder, { capacity: false });
  try {
    const result = await closedLoop(concurrency, options.warmupMs / 2, options.profileMs, send, () => recorder.clear());
    return summarizeProfile(concurrency, result, recorder);
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
    eventLoopUtilization: result.eventLoopUtilization,
  };
}
