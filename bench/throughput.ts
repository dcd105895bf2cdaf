/**
 * Section 2: POST /messages throughput and latency through the local runtime over real HTTP, next
 * to the rate of the same three DynamoDB requests issued raw, back to back, against the same
 * DynamoDB Local at the same concurrency, in the same run.
 * Closed loop: N senders each send, wait for the answer, and send again. The senders of both
 * workloads run in a child process (bench/load-generator.ts), never in the process that hosts the
 * service, and each process's CPU is accounted separately.
 */
import { performance } from 'node:perf_hooks';
import { type Bench, type Context, fmt, GOALS, type Goal, mark, table } from './harness';
import { recording } from './instrument';
import type { LoadGenerator, Workload } from './load-generator';
import { childPid, createProject, forkIpc, machineBusyMs, mean, percentile, processCpuMs, round, sum, uniqueId } from './util';

type Generator = ReturnType<typeof forkIpc<LoadGenerator>>;

/**
 * A warm-up, then a measured window whose calls are all counted whole: no call is in flight when
 * the window opens, and it closes when the last call started inside it returns. The load runs in
 * the generator; this (service) process takes the CPU and event-loop readings around it: its own,
 * DynamoDB Local's, and every other process's (machine busy time less the three).
 */
async function measureWindow(generator: Generator, workload: Workload, concurrency: number, warmupMs: number, measureMs: number) {
  await generator.call('warm', workload, concurrency, warmupMs);
  const javaPid = childPid('java');
  const before = {
    java: processCpuMs(javaPid),
    service: process.cpuUsage(),
    elu: performance.eventLoopUtilization(),
    machine: machineBusyMs(),
  };
  const started = performance.now();
  const load = await generator.call('measure', workload, concurrency, measureMs);
  const wallMs = performance.now() - started;
  const service = process.cpuUsage(before.service);
  const elu = performance.eventLoopUtilization(before.elu);
  const [javaAfter, machineAfter] = [processCpuMs(javaPid), machineBusyMs()];
  const serviceCpuMs = (service.user + service.system) / 1000;
  const javaCpuMs = before.java !== undefined && javaAfter !== undefined ? javaAfter - before.java : undefined;
  const machineMs = before.machine !== undefined && machineAfter !== undefined ? machineAfter - before.machine : undefined;
  const otherCpuMs =
    machineMs !== undefined && javaCpuMs !== undefined ? Math.max(0, machineMs - serviceCpuMs - load.cpuMs - javaCpuMs) : undefined;
  return { load, wallMs, serviceCpuMs, javaCpuMs, otherCpuMs, eluActive: elu.active, eluIdle: elu.idle };
}

type Window = Awaited<ReturnType<typeof measureWindow>>;

/** The windows of one workload and concurrency, merged. */
function summarizeWindows(concurrency: number, windows: readonly Window[]) {
  const total = (pick: (w: Window) => number | undefined) =>
    windows.every((w) => pick(w) !== undefined) ? sum(windows.map((w) => pick(w) ?? 0)) : undefined;
  const latencies = windows.flatMap((w) => w.load.latencies);
  const [failures, elapsedMs, wallMs] = [
    total((w) => w.load.failures) ?? 0,
    total((w) => w.load.elapsedMs) ?? 0,
    total((w) => w.wallMs) ?? 0,
  ];
  const [serviceMs, loadMs, javaMs, otherMs] = [
    total((w) => w.serviceCpuMs),
    total((w) => w.load.cpuMs),
    total((w) => w.javaCpuMs),
    total((w) => w.otherCpuMs),
  ];
  const percent = (ms: number | undefined, of = wallMs) => (ms === undefined ? null : round((ms / of) * 100, 0));
  const perOp = (ms: number | undefined) => (ms === undefined ? null : round(ms / Math.max(1, latencies.length), 3));
  const utilization = (active: number | undefined = 0, idle: number | undefined = 0) =>
    round(active + idle > 0 ? active / (active + idle) : 0, 2);
  return {
    concurrency,
    operations: latencies.length,
    errors: failures,
    seconds: round(elapsedMs / 1000, 3),
    perSecond: round(((latencies.length - failures) * 1000) / elapsedMs, 1),
    latencyMs: { mean: round(mean(latencies)), p50: round(percentile(latencies, 50)), p99: round(percentile(latencies, 99)) },
    /**
     * CPU used during the window, in % of one core: the service (bench process: gateway, handlers,
     * stand-ins), the load generator (over its own window, which the service's contains), DynamoDB
     * Local (java) and every other process on the machine.
     */
    cpu: {
      service: percent(serviceMs) ?? 0,
      loadGenerator: percent(loadMs, elapsedMs) ?? 0,
      java: percent(javaMs),
      other: percent(otherMs),
    },
    /** CPU time per operation in ms, by process. */
    cpuMsPerOp: { service: perOp(serviceMs) ?? 0, loadGenerator: perOp(loadMs) ?? 0, java: perOp(javaMs) },
    /** Share of the window each process's main thread was busy (1 = saturated). */
    eventLoopUtilization: {
      service: utilization(
        total((w) => w.eluActive),
        total((w) => w.eluIdle),
      ),
      loadGenerator: utilization(
        total((w) => w.load.eluActive),
        total((w) => w.load.eluIdle),
      ),
    },
  };
}

type LoadResult = ReturnType<typeof summarizeWindows>;

/**
 * A separate window with timing middleware on the handlers' clients: how many SDK calls a message
 * makes at this concurrency and how long each takes, beside the message's own latency.
 */
async function profile({ settings, service }: Context, generator: Generator, concurrency: number) {
  const { dynamo, sqs } = service.clients;
  await generator.call('warm', 'messages', concurrency, settings.warmupMs / 2);
  const [window, calls] = await recording(
    { dynamo, sqs },
    async (recorder) =>
      [
        await measureWindow(generator, 'messages', concurrency, 0, settings.profileMs),
        [...recorder.dynamo.map((c) => ({ service: 'DynamoDB', ...c })), ...recorder.sqs.map((c) => ({ service: 'SQS', ...c }))],
      ] as const,
    { capacity: false },
  );
  const result = summarizeWindows(concurrency, [window]);
  const messages = Math.max(1, result.operations);
  const groups = new Map<string, { service: string; command: string; ms: number[] }>();
  for (const call of calls) {
    const group = groups.get(`${call.service}:${call.command}`) ?? { service: call.service, command: call.command, ms: [] };
    groups.set(`${call.service}:${call.command}`, { ...group, ms: [...group.ms, call.ms] });
  }
  return {
    concurrency,
    messages: result.operations,
    latencyMs: result.latencyMs.mean,
    /** Per message: requests and mean duration of each SDK call, by command. */
    calls: [...groups.values()]
      .map((g) => ({ service: g.service, command: g.command, perMessage: round(g.ms.length / messages, 2), meanMs: round(mean(g.ms), 2) }))
      .filter((c) => c.perMessage >= 0.01)
      .sort((a, b) => b.perMessage * b.meanMs - a.perMessage * a.meanMs),
    /** Per message: summed time inside SDK calls (DynamoDB and SQS). */
    sdkMs: round(sum(calls.map((call) => call.ms)) / messages, 2),
    eventLoopUtilization: result.eventLoopUtilization.service,
  };
}

type Profile = Awaited<ReturnType<typeof profile>>;

async function measure(context: Context) {
  const { settings, service, log } = context;
  const { api, runtime } = service;
  const maxSenders = Math.max(...settings.concurrencies);
  const project = await createProject(api, 'bench throughput');
  const senders = Array.from({ length: maxSenders }, (_, i) => `sender-${i}`);
  // One busy group room; every sender is its own user so the per-user rate limit never mixes them.
  const roomId = uniqueId('busy');
  await api.expect(201, '/rooms', {
    token: await project.token('sender-0'),
    body: { id: roomId, type: 'group', members: senders.slice(1) },
  });
  const tokens = await Promise.all(senders.map((sender) => project.token(sender)));
  const generator = forkIpc<LoadGenerator>('bench/load-generator.ts', 'load generator', 2000);
  try {
    const { projectId } = project;
    const itemBytes = await generator.call('configure', {
      baseUrl: api.baseUrl,
      projectId,
      tokens,
      roomId,
      dynamoEndpoint: runtime.dynamoEndpoint,
      tableName: runtime.tableName,
    });
    log(`  load generator: child process ${generator.pid}`);
    // DynamoDB Local's JIT keeps speeding up for several seconds of load: get past that first
    // (this also warms the generator's own HTTP pool and SDK client).
    await generator.call('warm', 'messages', maxSenders, settings.jvmWarmupMs / 2);
    await generator.call('warm', 'raw', maxSenders, settings.jvmWarmupMs / 2);
    const rows = [];
    for (const concurrency of settings.concurrencies) {
      // ABBA order, two half windows each: a slow drift (JIT, GC, table growth) hits both workloads alike.
      const window = (workload: Workload) => measureWindow(generator, workload, concurrency, settings.warmupMs / 2, settings.measureMs / 2);
      const rawWindows = [await window('raw')];
      const messages = summarizeWindows(concurrency, [await window('messages'), await window('messages')]);
      const raw = summarizeWindows(concurrency, [...rawWindows, await window('raw')]);
      for (const [name, r] of Object.entries({ 'raw 3 requests': raw, 'POST /messages': messages })) {
        log(
          `  ${name} ×${concurrency}: ${r.perSecond}/s p50 ${r.latencyMs.p50} ms (${r.errors} errors); CPU % service ${r.cpu.service}, load generator ${r.cpu.loadGenerator}, java ${r.cpu.java}, other ${r.cpu.other}`,
        );
      }
      /** ratio: messages/s ÷ raw 3-request rate. */
      rows.push({ concurrency, messages, raw, ratio: round(messages.perSecond / raw.perSecond, 3) });
    }
    const profiles: Profile[] = [];
    for (const concurrency of settings.concurrencies) {
      profiles.push(await profile(context, generator, concurrency));
      log(`  profile ×${concurrency}: ${profiles.at(-1)?.latencyMs} ms per message, ${profiles.at(-1)?.sdkMs} ms in SDK calls`);
    }
    const seconds = (ms: number) => ms / 1000;
    const [jvmWarmupSeconds, warmupSeconds] = [seconds(settings.jvmWarmupMs), seconds(settings.warmupMs)];
    const [measureSeconds, profileSeconds] = [seconds(settings.measureMs), seconds(settings.profileMs)];
    return { jvmWarmupSeconds, warmupSeconds, measureSeconds, profileSeconds, rows, profiles, itemBytes };
  } finally {
    await generator.stop();
  }
}

type Throughput = Awaited<ReturnType<typeof measure>>;
type Row = Throughput['rows'][number];

/** The goal holds at the highest concurrency, where the service's own work, not latency, sets the rate. */
const hasGoal = (row: Row, rows: readonly Row[]) => row.concurrency === Math.max(...rows.map((r) => r.concurrency));
const rowPasses = (row: Row) => row.ratio >= GOALS.throughputRatio && row.messages.errors === 0;

/** Share of the machine a workload kept busy, in % of one core: the four CPU columns added up. */
const machineBusy = (r: LoadResult) => r.cpu.service + r.cpu.loadGenerator + (r.cpu.java ?? 0) + (r.cpu.other ?? 0);

/** "other" CPU (% of one core) in a throughput window above which the section says the machine was not quiet. */
const OTHER_CPU_WARNING = 10;

/** Saturated: an event loop or the machine busy for at least this share of the window. */
const SATURATED = 0.9;

/** The measured facts behind a missed throughput goal, and which limit the numbers point at. */
function throughputMiss(goal: Goal, row: Row, profile: Profile | undefined, cores: number): string {
  const m = row.messages;
  const r = row.raw;
  const capacity = cores * 100;
  const java = (x: LoadResult) => x.cpuMsPerOp.java ?? Number.NaN;
  const split = (x: LoadResult) =>
    `service ${x.cpu.service} %, load generator ${x.cpu.loadGenerator} %, DynamoDB Local ${x.cpu.java ?? 'n/a'} %, other ${x.cpu.other ?? 'n/a'} %`;
  const facts = [
    `message p50 ${fmt(m.latencyMs.p50, 2)} ms against ${fmt(r.latencyMs.p50, 2)} ms for one raw 3-request round.`,
    `CPU per message: service ${fmt(m.cpuMsPerOp.service, 2)} ms, load generator ${fmt(m.cpuMsPerOp.loadGenerator, 2)} ms, DynamoDB Local ${fmt(java(m), 2)} ms; per raw round: load generator ${fmt(r.cpuMsPerOp.loadGenerator, 2)} ms, DynamoDB Local ${fmt(java(r), 2)} ms (a message costs DynamoDB Local ${fmt(java(m) / java(r), 1)} × a raw round of the same requests).`,
    `Machine busy while sending messages: ${machineBusy(m)} of ${capacity} % (${split(m)}), event loops: service ${m.eventLoopUtilization.service.toFixed(2)}, load generator ${m.eventLoopUtilization.loadGenerator.toFixed(2)}; during the raw rounds: ${machineBusy(r)} % (${split(r)}), load generator's event loop ${r.eventLoopUtilization.loadGenerator.toFixed(2)}.`,
  ];
  const limits: string[] = [];
  const javaRatio = java(r) / java(m);
  if (row.concurrency === 1) {
    const calls = profile?.calls ?? [];
    limits.push(
      `With one sender the rate is one over the latency, so the ratio is about one raw round's mean latency over one message's: ${fmt(r.latencyMs.mean, 2)} / ${fmt(m.latencyMs.mean, 2)} ms = ${fmt(r.latencyMs.mean / m.latencyMs.mean, 2)}.${
        profile
          ? ` A message makes ${fmt(sum(calls.map((c) => c.perMessage)), 0)} SDK calls of ${fmt(Math.min(...calls.map((c) => c.meanMs)), 2)}–${fmt(Math.max(...calls.map((c) => c.meanMs)), 2)} ms each (listed next) against ${fmt(r.latencyMs.mean, 2)} ms for a whole raw round, and the service's own CPU is ${fmt(m.cpuMsPerOp.service, 2)} ms per message at this concurrency.`
          : ''
      }`,
    );
  } else {
    if (m.eventLoopUtilization.service >= SATURATED) {
      const goalRate = GOALS.throughputRatio * r.perSecond;
      limits.push(
        `The service process's event loop was saturated (${m.eventLoopUtilization.service.toFixed(2)}), so its CPU per message sets the rate: at ${fmt(m.cpuMsPerOp.service, 2)} ms one event loop tops out near ${fmt(1000 / m.cpuMsPerOp.service, 0)} messages/s, while the goal needs ${GOALS.throughputRatio} × ${fmt(r.perSecond, 0)} = ${fmt(goalRate, 0)} messages/s, at most ${fmt(1000 / goalRate, 2)} ms of service CPU per message.`,
      );
    }
    if (Number.isFinite(javaRatio)) {
      const bound = `were its CPU the only limit, the ratio could ${javaRatio < GOALS.throughputRatio ? 'not pass' : 'reach'} ${fmt(java(r), 2)} / ${fmt(java(m), 2)} ms = ${fmt(javaRatio, 2)}`;
      limits.push(
        javaRatio < GOALS.throughputRatio
          ? `DynamoDB Local alone would also keep the ratio under the goal: ${bound}.`
          : `DynamoDB Local is not what holds messages back: ${bound}.`,
      );
    }
    if (machineBusy(m) >= SATURATED * capacity) {
      limits.push(
        `All ${cores} cores were busy, so the load generator's ${m.cpu.loadGenerator} % came out of the same CPU the service and DynamoDB Local needed.`,
      );
    }
  }
  if (r.eventLoopUtilization.loadGenerator >= SATURATED) {
    limits.push(
      `The raw rounds were bounded by the load generator's own event loop (${r.eventLoopUtilization.loadGenerator.toFixed(2)} busy at ${fmt(r.cpuMsPerOp.loadGenerator, 2)} ms of SDK client CPU per call), so its rate is a floor of what DynamoDB Local can take and the ratio, if anything, is flattering.`,
    );
  }
  const sdk = profile
    ? ` Per message: ${profile.calls.map((c) => `${c.service} ${c.command} ${fmt(c.perMessage, 2)} × ${fmt(c.meanMs, 2)} ms`).join(', ')}; ${fmt(profile.sdkMs, 2)} of ${fmt(profile.latencyMs, 2)} ms inside SDK calls.`
    : '';
  return `- **${goal.name}** (${goal.measured}): ${facts.join(' ')}${limits.length ? ` ${limits.join(' ')}` : ''}${sdk}`;
}

export const throughput: Bench<Throughput> = {
  id: 'throughput',
  name: 'Throughput',
  needs: 'service',
  run: measure,

  goals: ({ rows }) =>
    rows
      .filter((row) => hasGoal(row, rows))
      .map((row) => ({
        id: `throughput.c${row.concurrency}`,
        name: `POST /messages vs the same 3 DynamoDB requests raw, ${row.concurrency} sender${row.concurrency > 1 ? 's' : ''}`,
        target: `≥ ${GOALS.throughputRatio} ×`,
        measured: `${row.ratio.toFixed(2)} × (${fmt(row.messages.perSecond, 0)} vs ${fmt(row.raw.perSecond, 0)} /s)`,
        pass: rowPasses(row),
      })),

  misses: (missed, t, { machine }) =>
    missed.map((goal) => {
      const row = t.rows.find((r) => `throughput.c${r.concurrency}` === goal.id) as Row;
      return throughputMiss(
        goal,
        row,
        t.profiles.find((p) => p.concurrency === row.concurrency),
        machine.cpus,
      );
    }),

  section(t, { machine }) {
    const rows = t.rows.flatMap((row) => {
      const line = (workload: string, r: LoadResult, last: (string | number)[]) => [
        row.concurrency,
        workload,
        fmt(r.perSecond, 0),
        fmt(r.latencyMs.p50, 2),
        fmt(r.latencyMs.p99, 2),
        r.errors,
        `${r.cpu.service} / ${r.cpu.loadGenerator} / ${r.cpu.java ?? 'n/a'} / ${r.cpu.other ?? 'n/a'}`,
        `${fmt(r.cpuMsPerOp.service, 2)} / ${fmt(r.cpuMsPerOp.loadGenerator, 2)} / ${fmt(r.cpuMsPerOp.java, 2)}`,
        `${r.eventLoopUtilization.service.toFixed(2)} / ${r.eventLoopUtilization.loadGenerator.toFixed(2)}`,
        ...last,
      ];
      return [
        line('POST /messages', row.messages, [row.ratio.toFixed(2), hasGoal(row, t.rows) ? mark(rowPasses(row)) : '—']),
        line('raw 3 requests', row.raw, ['', '']),
      ];
    });
    const busiestOther = Math.max(0, ...t.rows.flatMap((row) => [row.messages.cpu.other ?? 0, row.raw.cpu.other ?? 0]));
    const noise =
      busiestOther >= OTHER_CPU_WARNING
        ? `\n\n**Not a quiet machine:** other processes took up to ${busiestOther} % of one core during these windows, CPU the service, the load generator and DynamoDB Local would otherwise have had; rates and latencies above are lower, and CPU per operation may be higher, than on a quiet machine.`
        : '';
    const profileRows = t.profiles.map((p) => [
      p.concurrency,
      fmt(p.latencyMs, 2),
      fmt(t.rows.find((r) => r.concurrency === p.concurrency)?.raw.latencyMs.mean, 2),
      p.calls.map((c) => `${c.command} ${fmt(c.perMessage, 2)} × ${fmt(c.meanMs, 2)} ms`).join(', '),
      `${fmt(p.sdkMs, 2)} (${fmt((p.sdkMs / p.latencyMs) * 100, 0)} %)`,
      fmt(p.latencyMs - p.sdkMs, 2),
      p.eventLoopUtilization.toFixed(2),
    ]);
    return `## 2. Throughput and latency

Closed loop: N senders each send, wait for the answer, send again. After ${t.jvmWarmupSeconds} s of load to get DynamoDB Local's JIT past its warm-up, each workload is measured for ${t.measureSeconds} s per concurrency, in two halves run in ABBA order (raw, messages, messages, raw) so that slow drift hits both alike; every half starts after ${fmt(t.warmupSeconds / 2, 1)} s of unmeasured warm-up and counts its requests whole (none in flight when it opens; it closes when the last request started inside it returns). \`POST /messages\` goes over real HTTP (global \`fetch\`, keep-alive) into the local runtime, each sender its own user in one group room (no receivers), with the rate limit set out of the way. The raw workload issues, back to back with its own \`DynamoDBClient\`, the three requests a plain message makes (section 1): the UpdateItem of the sender's rate-limit window, the PutItem of a message-shaped item (${t.itemBytes.raw} bytes by DynamoDB's size rules; a stored message here is ${t.itemBytes.message} bytes) and the Query of the room's connections; so the ratio is the share of the storage's own rate that HTTP, auth, validation and the handler keep.

What runs where: the service is the bench process, with everything \`startLocalRuntime\` runs in it (the gateway and its handlers, the SQS stand-in, and whatever else the local runtime hosts in-process); the senders of both workloads run in a separate load-generator process (\`bench/load-generator.ts\`, a \`node --import tsx\` child of the bench process), which runs the closed loops and sends the latencies, counts, its own CPU time and event-loop utilization of every window back over IPC; DynamoDB Local is a JVM, a third process. On AWS no client shares a Lambda's process, and a load generator inside the service process would spend the service's one event loop on its own \`fetch\`, JSON and timing work, and once that loop saturates its time is what limits the service; so neither workload's senders run there; both get the same treatment, so the ratio compares like with like. Moving the senders out takes them off the service's event loop, not off the machine: all three processes share the same ${machine.cpus} cores, so the load generator's CPU still competes with the service and DynamoDB Local in the OS scheduler, and the table shows how much it takes.

CPU is given in % of one core (${machine.cpus * 100} % = all cores) and as CPU time per operation, per process: the service (the bench process's \`process.cpuUsage\`; near 0 during raw windows, which never reach it), the load generator (its own \`process.cpuUsage\`, all threads), DynamoDB Local's JVM (\`/proc\`), and "other", every other process on the machine (busy time from \`/proc/stat\` minus those three), which should be near 0 on a quiet machine. ELU is each Node process's event-loop utilization (1.00 = its main thread never idle): a service ELU near 1 means the service's single thread is the limit; a load-generator ELU near 1 means the generator could not offer more load, so that workload's rate is a floor.

${table(`Senders | Workload | Per second | p50 ms | p99 ms | Errors | CPU % service / load gen / java / other | CPU ms per op service / load gen / java | ELU service / load gen | Ratio | Goal ≥ ${GOALS.throughputRatio}`, rows)}${noise}

Where the time of a message goes: a separate ${t.profileSeconds} s window per concurrency with timing middleware on the handlers' DynamoDB and SQS clients (no capacity counting). "In SDK calls" sums the calls of one message, each from the SDK's first middleware to the parsed response: under load that includes waiting for the service process's event loop as well as DynamoDB Local's own queueing, and calls the pipeline runs concurrently are added up, so the share can come close to (or pass) 100 %.

${table('Senders | Message latency ms (mean) | One raw round ms (mean) | SDK calls per message × mean duration | In SDK calls ms | Outside SDK calls ms | Service ELU', profileRows)}`;
  },
};
