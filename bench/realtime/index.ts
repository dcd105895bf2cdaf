/**
 * Realtime fan-out: one room of N = 10, 100, 1000 WebSocket receivers, delivery latency (sender's
 * send → each receiver's receipt) and deliveries per second, at a fixed offered rate and at the
 * highest rate that keeps p99 ≤ 100 ms with every frame delivered, for
 *
 *   - a plain `ws` broadcast server: the physical limit,
 *   - Soketi driven by pusher-js, an off-the-shelf Pusher server (opt-in: `BENCH_SOKETI=1`),
 *   - the service's local runtime: persisted messages and `client-*` events,
 *   - the same runtime over the Pusher protocol (pusher-js at `/app/<key>`), at N = 100 right after
 *     the native series there, so Pusher ÷ native compares two protocols of one server in one run,
 *
 * plus the AWS work per frame on the service. Every target gets its own receivers child process
 * (bench/realtime/receivers.ts) holding the sender and the receivers, so client CPU is never
 * charged to the server under test.
 */
import { join } from 'node:path';
import { defaultMemorySizeMb } from '../../lib/constructs/chat-function';
import {
  busyHundredCoalesced,
  coalescingInput,
  costModel,
  type IdleMonth,
  idleMonth,
  lastRunResults,
  renderCostModel,
} from '../cost-model';
import { type Bench, type Context, fmt, type Goal, goalTable, loadAverage, table } from '../harness';
import { recording } from '../instrument';
import { childPid, createProject, idleConnectionHour, ownCpuMs, PRICES, processCpuMs, repoRoot, round, uniqueId, versionOf } from '../util';
import { COST_WARMUP, type CostRow, measureCost, waitForSilence } from './cost';
import { type DatabaseFloor, databaseFloor } from './database-floor';
import {
  CONNECT,
  fixedRateFor,
  fixedWindowMsFor,
  maxDeliveries,
  measureTarget,
  P99_BOUND_MS,
  QUEUED,
  SETTINGS,
  type Series,
  type TargetResult,
  type WindowFigures,
} from './measure';
import type { TargetKind, Workload } from './receivers';
import { startPlainWsServer, startSoketi } from './servers';
import { ensureSoketiInstalled } from './soketi-install';

/** Seconds each target may spend before its searches stop taking steps. */
const BUDGET: Record<TargetKind, number> = { plain: 65, soketi: 65, service: 170, pusher: 75 };
/** The room size at which the service is measured over the Pusher protocol beside its native one. */
const PUSHER_RECEIVERS = 100;
/** Pusher ÷ native at PUSHER_RECEIVERS: deliveries/s at least this, p99 at most its inverse. */
const PUSHER_RATIO = 0.9;
/** Room sizes at which the service's AWS work per frame is counted, and frames per workload there. */
const COST = { receivers: [10, 100], frames: 20 };
/** Room size at which the service's database share of a frame is measured: the p99 goal there is Soketi's p99 plus it. */
const FLOOR_RECEIVERS = 100;
const SOKETI_SKIPPED = 'Soketi is opt-in: `BENCH_SOKETI=1 npm run bench` (or `npm run bench -- --soketi`)';
/** The queued fan-out leg's room size (`BENCH_QUEUED_RECEIVERS`, 0 to skip); it runs with Soketi, its baseline. */
const queuedReceivers = () => {
  const given = Number(process.env.BENCH_QUEUED_RECEIVERS ?? QUEUED.defaultReceivers);
  return Number.isFinite(given) && given > 0 ? Math.round(given) : 0;
};
/** Deliveries/s ÷ Soketi at the queued leg's size. */
const QUEUED_RATIO = 0.5;

async function plainTarget(sizes: readonly number[], log: Context['log']) {
  const server = await startPlainWsServer();
  try {
    const software = `ws ${versionOf('ws')} server in the bench process; clients: ws`;
    const plan = { target: 'plain', label: 'Plain `ws` broadcast', software, workloads: ['client'], budgetSeconds: BUDGET.plain } as const;
    return await measureTarget({ ...plan, config: { kind: 'plain', url: `${server.url}/rooms/bench` }, serverCpuMs: ownCpuMs }, sizes, log);
  } finally {
    await server.stop();
  }
}

async function soketiTarget(sizes: readonly number[], queued: number, log: Context['log']) {
  ensureSoketiInstalled(log);
  const soketi = await startSoketi();
  log(`  Soketi ${soketi.version} ready on ${soketi.host}:${soketi.port} (pid ${soketi.pid})`);
  try {
    const software = `@soketi/soketi ${soketi.version} (uWebSockets.js ${soketi.uWebSocketsVersion}) as a child process; clients: pusher-js ${versionOf('pusher-js')}, private channel`;
    const { host, port, appKey, appSecret } = soketi;
    const plan = { target: 'soketi', label: 'Soketi', software, workloads: ['client'], budgetSeconds: BUDGET.soketi } as const;
    const config = { kind: 'soketi', host, port, appKey, appSecret, channel: 'private-bench' } as const;
    const queuedLeg = queued ? { queued: { receivers: queued } } : {};
    return await measureTarget({ ...plan, config, serverCpuMs: () => processCpuMs(soketi.pid) ?? null, ...queuedLeg }, sizes, log);
  } finally {
    await soketi.stop();
  }
}

/**
 * The service over the Pusher protocol in a room of its own: pusher-js clients on
 * `private-room-<roomId>`, the same users as the native receivers, each authorized by
 * `POST /auth/channel` with its own token (at connect, outside the measured windows).
 */
async function pusherTarget(
  { service, log }: Context,
  project: { apiKey: string },
  senderToken: string,
  receiverTokens: readonly string[],
  serverCpuMs: () => number | null,
  n: number,
  cost: CostRow[],
  nextProbeId: () => number,
) {
  const { runtime, api } = service;
  const { dynamo, sqs, sns } = service.clients;
  const app = (await api.expect(201, '/admin/pusher-app', { apiKey: project.apiKey, body: {} })).body as { key: string };
  const roomId = uniqueId('rt-pusher-room');
  await api.expect(201, '/rooms', { token: senderToken, body: { id: roomId, type: 'public', members: [] } });
  const { hostname, port } = new URL(runtime.baseUrl);
  const wsBase = runtime.baseUrl.replace(/^http/, 'ws');
  return measureTarget(
    {
      target: 'pusher',
      label: 'Service over Pusher protocol',
      software: `the same local runtime at \`/app/<key>\` (Pusher protocol 7); clients: pusher-js ${versionOf('pusher-js')}, one user per receiver, private channel of a public room, each subscription authorized by \`POST /auth/channel\` with the user's token; persisted messages sent on a native socket of the room by the sender's user, received as the Pusher event \`message\``,
      workloads: ['message', 'client'],
      budgetSeconds: BUDGET.pusher,
      config: {
        kind: 'pusher',
        host: hostname,
        port: Number(port),
        appKey: app.key,
        channel: `private-room-${roomId}`,
        authUrl: `${runtime.baseUrl}/auth/channel`,
        senderToken,
        receiverTokens,
        messageSenderUrl: `${wsBase}/ws/rooms/${encodeURIComponent(roomId)}?token=${senderToken}&history=0`,
      },
      serverCpuMs,
      // The same count as the native leg's at this N: where the two protocols' frames differ in work.
      afterSize: async (receivers) => {
        await recording({ dynamo, sqs, sns }, async (recorder) => {
          for (const workload of ['message', 'client'] as const) {
            const row = await measureCost(runtime, recorder, receivers, n, workload, COST.frames, nextProbeId);
            cost.push(row);
            log(
              `    pusher cost ${workload} N=${n}: DynamoDB ${row.dynamo.requestsMedian} requests (${Object.entries(row.dynamo.byCommand)
                .map(([command, count]) => `${command} ${count}`)
                .join(
                  ', ',
                )}); Lambda ${row.lambdaInvocations} (${round(row.lambdaGbSeconds * 1000, 2)} GB-ms); PostToConnection ${row.postToConnection}`,
            );
          }
        }).catch((error: unknown) => log(`    pusher cost failed: ${error instanceof Error ? error.message : String(error)}`));
      },
    },
    [n],
    log,
  );
}

async function serviceTarget(context: Context, sizes: readonly number[], queued: number, notes: string[]) {
  const { service, log } = context;
  const { runtime, api } = service;
  const { dynamo, sqs, sns } = service.clients;
  const cost: { rows: CostRow[]; error?: string } = { rows: [] };
  let floor: DatabaseFloor | undefined;
  let pusher: TargetResult | undefined;
  const pusherCost: CostRow[] = [];
  runtime.startConsumers();
  const project = await createProject(api, 'bench realtime');
  const senderToken = await project.token('rt-sender');
  const roomId = uniqueId('rt-room');
  await api.expect(201, '/rooms', { token: senderToken, body: { id: roomId, type: 'public', members: [] } });
  const tokensStarted = performance.now();
  const receiverTokens: string[] = [];
  const users = Math.max(...sizes, queued);
  // 16 at a time, in order: receiver i is user rt-r<i>.
  for (let i = 0; i < users; i += 16) {
    receiverTokens.push(...(await Promise.all(Array.from({ length: Math.min(16, users - i) }, (_, j) => project.token(`rt-r${i + j}`)))));
  }
  log(`  service: project, public room and ${receiverTokens.length + 1} user tokens in ${round(performance.now() - tokensStarted, 0)} ms`);
  const javaPid = childPid('java');
  const serverCpuMs = () => ownCpuMs() + (processCpuMs(javaPid) ?? 0);
  let probeId = 1_000_000;
  const result = await measureTarget(
    {
      target: 'service',
      label: 'Service (local runtime)',
      software: `local runtime (gateway on ws ${versionOf('ws')}, handlers in process, DynamoDB Local, fauxqs ${versionOf('fauxqs')}); clients: ws, one user per receiver, public room`,
      workloads: ['message', 'client'],
      budgetSeconds: BUDGET.service,
      config: { kind: 'service', wsBase: runtime.baseUrl.replace(/^http/, 'ws'), roomId, senderToken, receiverTokens },
      serverCpuMs,
      // Past REALTIME_FANOUT_QUEUE_THRESHOLD a frame's posts go to the realtime workers as fan-out jobs.
      ...(queued ? { queued: { receivers: queued, queuedJobs: () => runtime.stats().lambda.byFunction.RealtimeWorker ?? 0 } } : {}),
      beside: async (n) => {
        if (n !== PUSHER_RECEIVERS) return;
        log(`  -- pusher (the service over the Pusher protocol, N = ${n}, beside the native series)`);
        // The native leg's sockets, which stay open beside it.
        const nativeSockets = runtime.gateway.connectionCount();
        try {
          pusher = await pusherTarget(
            context,
            project,
            senderToken,
            receiverTokens.slice(0, n),
            serverCpuMs,
            n,
            pusherCost,
            () => probeId++,
          );
          // Its sockets' \`$disconnect\` work must not fall into the native leg's cost and floor at this N.
          const silent = await recording(
            { dynamo, sqs },
            (drain) => waitForSilence(runtime, () => drain.dynamo.length + drain.sqs.length, 30_000, nativeSockets),
            { capacity: false },
          );
          if (!silent) notes.push('The service was still busy with the Pusher receivers’ departures 30 s after they closed.');
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          log(`  pusher: failed to start: ${message}`);
          pusher = { target: 'pusher', label: 'pusher', software: '', workloads: [], connect: [], series: [], error: message, seconds: 0 };
        }
      },
      afterSize: async (receivers, n) => {
        if (n === FLOOR_RECEIVERS) {
          floor = await databaseFloor(project.projectId, roomId, fixedRateFor(n));
          log(`    DynamoDB requests of a client-* frame alone, N=${n}: p50 ${floor.p50} p90 ${floor.p90} ms`);
        }
        if (!COST.receivers.includes(n)) return;
        await recording({ dynamo, sqs, sns }, async (recorder) => {
          for (const workload of ['message', 'client'] as const) {
            const row = await measureCost(runtime, recorder, receivers, n, workload, COST.frames, () => probeId++);
            cost.rows.push(row);
            log(
              `    cost ${workload} N=${n}: DynamoDB ${row.dynamo.requestsMedian} requests (mean ${row.dynamo.requestsMean}), ${row.dynamo.writeUnits} WU, ${row.dynamo.readUnits} RU; SQS ${row.sqs.handlers} + ${row.sqs.consumers}; Lambda ${row.lambdaInvocations}; PostToConnection ${row.postToConnection}; $${row.pricePerMillionTotal}/M`,
            );
          }
        }).catch((error: unknown) => {
          cost.error = error instanceof Error ? error.message : String(error);
          log(`    cost N=${n} failed: ${cost.error}`);
        });
      },
    },
    sizes,
    log,
  );
  // measureTarget has closed the receivers: let the runtime finish their `$disconnect` work.
  const silent = await recording(
    { dynamo, sqs },
    // Each `$disconnect` reads the room's list: 5,000 departures take a while.
    (drain) => waitForSilence(runtime, () => drain.dynamo.length + drain.sqs.length, queued ? 180_000 : 30_000),
    { capacity: false },
  );
  if (!silent) notes.push(`The service was still busy with the receivers’ departures ${queued ? 180 : 30} s after they closed.`);
  if (cost.rows.length === 0 && !cost.error) cost.error = result.error ?? 'no cost was counted';
  return { result, cost, floor, pusher, pusherCost };
}

async function measure(context: Context) {
  const { settings, log } = context;
  const started = performance.now();
  const loadAverageAtStart = loadAverage();
  const sizes = [...settings.receivers].sort((a, b) => a - b);
  // Only beside Soketi, its baseline, and only past the series' largest room.
  const queued = settings.soketi && queuedReceivers() > Math.max(...sizes) ? queuedReceivers() : 0;
  const notes: string[] = [];
  const targets: TargetResult[] = [];
  let cost: { rows: CostRow[]; error?: string } = { rows: [], error: 'the service leg did not start' };
  let floor: DatabaseFloor | undefined;
  let pusher: TargetResult | undefined;
  let pusherCost: CostRow[] = [];
  const guard = async (target: TargetKind, work: () => Promise<TargetResult>) => {
    log(`  -- ${target}`);
    try {
      targets.push(await work());
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      log(`  ${target}: failed to start: ${message}`);
      targets.push({ target, label: target, software: '', workloads: [], connect: [], series: [], error: message, seconds: 0 });
    }
  };
  await guard('plain', () => plainTarget(sizes, log));
  if (settings.soketi) await guard('soketi', () => soketiTarget(sizes, queued, log));
  else log(`  -- soketi: skipped. ${SOKETI_SKIPPED}`);
  await guard('service', async () => {
    const outcome = await serviceTarget(context, sizes, queued, notes);
    cost = outcome.cost;
    floor = outcome.floor;
    pusher = outcome.pusher;
    pusherCost = outcome.pusherCost;
    return outcome.result;
  });
  if (pusher) targets.push(pusher);
  else log(`  -- pusher: not run (N = ${PUSHER_RECEIVERS} is not among the room sizes, or the service leg stopped before it)`);
  for (const target of targets) {
    for (const step of target.connect.filter((c) => c.missed.length > 0)) {
      notes.push(
        `${target.label}: after growing the room to ${step.receivers}, a check event did not reach ${step.missed[0]} of the receivers although each had been accepted${
          target.target === 'service' ? ' (had its `connected` frame)' : ''
        }; they were reopened (${step.missed.length} round${step.missed.length > 1 ? 's' : ''}${step.stillMissing ? `, ${step.stillMissing} never recovered` : ''}) before measuring. The server forgot live connections while the room filled up.`,
      );
    }
    for (const series of target.series) {
      const where = `${target.label}, ${series.workload}, N = ${series.receivers}`;
      const windows = [series.fixed, ...series.search.steps];
      if (windows.some((w) => w.receiversElu >= 0.9)) {
        notes.push(
          `${where}: the receivers child's event loop was saturated (ELU ≥ 0.9) in some window, so the clients, not the server, may have set the limit there.`,
        );
      }
      const busiest = Math.max(0, ...windows.map((w) => w.otherCpuPercent ?? 0));
      if (busiest >= 25)
        notes.push(
          `${where}: other processes on the machine took up to ${busiest} % of one core during these windows; latencies there are worse than on a quiet machine.`,
        );
      const unsettled = windows.filter((w) => !w.settled).length;
      if (unsettled > 0) {
        notes.push(
          `${where}: ${unsettled} window(s) opened while frames of an earlier one were still arriving (no quiet ${SETTINGS.quietMs} ms within ${SETTINGS.quietMaxMs / 1000} s), so they also carried that backlog.`,
        );
      }
      if (windows.some((w) => w.duplicates > 0)) notes.push(`${where}: some frames were delivered twice to the same receiver.`);
    }
  }
  // After every leg, so its synth's CPU falls in no window.
  log('  -- idle month (synthesizing the first-deploy templates in a child)');
  const idle: IdleMonth | { error: string } = await idleMonth(context.baseEnv).catch((error: unknown) => ({
    error: error instanceof Error ? error.message : String(error),
  }));
  log(`  idle month: ${'error' in idle ? idle.error : `$${idle.monthlyDollars}`}`);
  const last = lastRunResults(join(repoRoot, 'bench', 'results', 'latest.json'));
  const model = costModel(cost.rows, coalescingInput(last.results, last.where));
  for (const row of model?.rows ?? [])
    log(`  cost model N=${row.receivers} ${row.rate}${row.coalesced ? ' coalesced' : ''}: $${row.total}/M messages`);
  const seconds = round((performance.now() - started) / 1000, 1);
  return {
    seconds,
    model,
    idle,
    loadAverageAtStart,
    receivers: sizes,
    soketi: settings.soketi,
    /** The queued fan-out leg's room size; 0 when it did not run. */
    queuedReceivers: queued,
    settings: SETTINGS,
    budgetSeconds: BUDGET,
    targets,
    cost,
    /** The AWS work per frame of the Pusher leg, counted as the native leg's at the same N. */
    pusherCost,
    floor,
    notes,
  };
}

type Realtime = Awaited<ReturnType<typeof measure>>;

const find = (result: Realtime, target: TargetKind, workload: Workload, n: number) =>
  result.targets.find((t) => t.target === target)?.series.find((s) => s.workload === workload && s.receivers === n);
const frameName = (workload: Workload) => (workload === 'message' ? 'message (persisted)' : '`client-*` event');

/**
 * The `client-*` goals against Soketi, by room size: deliveries/s at the highest passing rate, p99 at
 * the fixed rate. At N = 100 the p99 goal is Soketi's p99 plus the run's database floor (p50 of a
 * frame's two DynamoDB requests, bench/realtime/database-floor.ts): the frame keeps its rate-limit
 * write and its connection-list read, which Soketi does not have, so the floor is the database's.
 */
const SOKETI_GOALS = [
  { n: 100, deliveriesRatio: 0.3, p99: 'soketi+floor' },
  { n: 1000, deliveriesRatio: 0.7, p99: 1.5 },
] as const;

/** The service's `client-*` p99 at N = 100 against Soketi's p99 plus the database floor, all three from this run. */
export function p99AgainstFloor(serviceP99: number | undefined, soketiP99: number | undefined, floorP50: number | undefined) {
  if (serviceP99 === undefined || soketiP99 === undefined || floorP50 === undefined) return null;
  const limit = round(soketiP99 + floorP50, 2);
  return { serviceP99, soketiP99, floorP50, limit, pass: serviceP99 <= limit };
}

function goals(result: Realtime): Goal[] {
  // Without Soketi the ratios are not measured (skipped); with it, a ratio that could not be formed is a miss.
  const judged = (pass: boolean) => (result.soketi ? pass : null);
  const skipped = `not run: ${SOKETI_SKIPPED}`;
  const goals: Goal[] = SOKETI_GOALS.flatMap(({ n, deliveriesRatio, p99: p99Goal }) => {
    const service = find(result, 'service', 'client', n);
    const soketi = find(result, 'soketi', 'client', n);
    const serviceMax = maxDeliveries(service);
    const soketiMax = maxDeliveries(soketi);
    const throughputRatio = serviceMax !== null && soketiMax ? serviceMax / soketiMax : null;
    const serviceP99 = service?.fixed.latencyMs.p99;
    const soketiP99 = soketi?.fixed.latencyMs.p99;
    const p99Ratio = serviceP99 !== undefined && soketiP99 ? serviceP99 / soketiP99 : null;
    const floor = soketi?.search.failedAt === null ? '; Soketi never failed, so its figure is a floor' : '';
    const deliveries: Goal = {
      id: `realtime.client.deliveries.n${n}`,
      name: `client-* deliveries/s at N = ${n}, service ÷ Soketi (highest rate with p99 ≤ 100 ms, all delivered)`,
      target: `≥ ${deliveriesRatio} ×`,
      measured: !result.soketi
        ? skipped
        : throughputRatio === null
          ? `n/a (service ${serviceMax ?? 'none'}, Soketi ${soketiMax ?? 'none'})`
          : `${Number(throughputRatio.toPrecision(2))} × (${serviceMax} vs ${soketiMax} /s${floor})`,
      pass: judged(throughputRatio !== null && throughputRatio >= deliveriesRatio),
    };
    if (p99Goal === 'soketi+floor') {
      const against = p99AgainstFloor(serviceP99, soketiP99, n === FLOOR_RECEIVERS ? result.floor?.p50 : undefined);
      return [
        deliveries,
        {
          id: `realtime.client.p99.n${n}`,
          name: `client-* p99 at N = ${n} and the fixed rate, service against Soketi's p99 plus the database floor (p50 of a frame's two DynamoDB requests), all three from this run`,
          target: '≤ Soketi p99 + floor',
          measured: !result.soketi
            ? skipped
            : against === null
              ? `n/a (service ${serviceP99 ?? 'none'}, Soketi ${soketiP99 ?? 'none'}, floor ${result.floor?.p50 ?? 'not measured'} ms)`
              : `${against.serviceP99} ms vs ${against.soketiP99} + ${against.floorP50} = ${against.limit} ms (${p99Ratio === null ? 'n/a' : Number(p99Ratio.toPrecision(3))} × Soketi alone)`,
          pass: judged(!!against?.pass && service?.fixed.deliveredShare === 1),
        },
      ];
    }
    return [
      deliveries,
      {
        id: `realtime.client.p99.n${n}`,
        name: `client-* p99 at N = ${n} and the fixed rate, service ÷ Soketi`,
        target: `≤ ${p99Goal} ×`,
        measured: !result.soketi
          ? skipped
          : p99Ratio === null
            ? 'n/a'
            : `${Number(p99Ratio.toPrecision(3))} × (${serviceP99} vs ${soketiP99} ms)`,
        pass: judged(p99Ratio !== null && p99Ratio <= p99Goal && service?.fixed.deliveredShare === 1),
      },
    ];
  });
  goals.push(queuedGoal(result), ...pusherGoals(result), costGoal(result));
  for (const workload of ['message', 'client'] as const) {
    const rows = result.cost.rows.filter((row) => row.workload === workload).sort((a, b) => a.receivers - b.receivers);
    const [first, last] = [rows[0], rows.at(-1)];
    const same =
      first !== undefined &&
      last !== undefined &&
      first !== last &&
      first.dynamo.requestsMedian === last.dynamo.requestsMedian &&
      Math.abs(first.dynamo.writeUnits - last.dynamo.writeUnits) <= 0.1;
    goals.push({
      id: `realtime.${workload}.dynamoFlat`,
      name: `DynamoDB work per ${workload === 'message' ? 'message' : 'client-* event'} independent of N`,
      // Read units follow the bytes of the connection list a frame must read, so they grow with N
      // by design (about 0.5 per 4 KB of list); requests and writes must not.
      target: 'same requests and write units at every N',
      measured: rows.length
        ? rows
            .map((row) => `N=${row.receivers}: ${row.dynamo.requestsMedian} req, ${row.dynamo.writeUnits} WU, ${row.dynamo.readUnits} RU`)
            .join('; ')
        : 'n/a',
      // A leg that failed before two sizes were counted cannot show flat work: a miss.
      pass: same,
    });
  }
  return goals;
}

const queuedOf = (result: Realtime, target: TargetKind) => result.targets.find((t) => t.target === target)?.queued;
const queuedBurst = (queued: ReturnType<typeof queuedOf>) => (queued && 'burst' in queued ? queued.burst : undefined);

/** Deliveries/s of one saturating burst at the queued leg's size, service ÷ Soketi. */
function queuedGoal(result: Realtime): Goal {
  const n = result.queuedReceivers || queuedReceivers() || QUEUED.defaultReceivers;
  const [service, soketi] = [queuedOf(result, 'service'), queuedOf(result, 'soketi')];
  const [serviceBurst, soketiBurst] = [queuedBurst(service), queuedBurst(soketi)];
  const ratio =
    serviceBurst && soketiBurst?.deliveriesPerSecond ? serviceBurst.deliveriesPerSecond / soketiBurst.deliveriesPerSecond : null;
  const ran = result.soketi && result.queuedReceivers > 0;
  const why = [service, soketi].flatMap((leg, i) => (leg && 'error' in leg ? [`${i ? 'Soketi' : 'service'}: ${leg.error}`] : []));
  const incomplete = [serviceBurst, soketiBurst].some((b) => b && b.deliveredShare < 1);
  return {
    id: `realtime.client.deliveries.queued.n${n}`,
    name: `client-* deliveries/s ÷ Soketi, N = ${n.toLocaleString('en-US')} (queued fan-out; one burst of ${QUEUED.frames} frames at ${QUEUED.rate}/s, every frame delivered)`,
    target: `≥ ${QUEUED_RATIO} ×`,
    measured: !result.soketi
      ? skipped(`${SOKETI_SKIPPED}`)
      : !ran
        ? skipped(`\`BENCH_QUEUED_RECEIVERS\` is 0 or not above the series' largest room`)
        : ratio === null
          ? `n/a (${why.join('; ') || 'no burst measured'})`
          : `${Number(ratio.toPrecision(2))} × (${serviceBurst?.deliveriesPerSecond} vs ${soketiBurst?.deliveriesPerSecond} /s${
              incomplete
                ? `; delivered ${fmt((serviceBurst?.deliveredShare ?? 0) * 100, 2)} % vs ${fmt((soketiBurst?.deliveredShare ?? 0) * 100, 2)} %`
                : ''
            }${
              (soketiBurst?.receiversElu ?? 0) >= 0.9
                ? `; Soketi's receivers child was saturated (ELU ${soketiBurst?.receiversElu.toFixed(2)}), so its figure is the pusher-js clients' limit and the ratio an upper bound`
                : ''
            })`,
    pass: ran ? ratio !== null && ratio >= QUEUED_RATIO && serviceBurst?.deliveredShare === 1 : null,
  };
}
const skipped = (why: string) => `not run: ${why}`;

/** The issue's ≤ $30 per million messages in a busy (20 msg/s) room of 100 with coalescing, from the cost model. */
function costGoal(result: Realtime): Goal {
  const row = busyHundredCoalesced(result.model);
  const plain = result.model?.rows.find((r) => r.receivers === 100 && r.rate === 'busy' && !r.coalesced);
  const input = result.model?.coalescing;
  return {
    id: 'realtime.cost.n100.busy',
    name: 'cost per million messages, room of 100, busy (20 msg/s), coalesced (cost model)',
    target: '≤ $30',
    measured: !row
      ? 'n/a (no message cost rows at N = 10 and 100)'
      : `$${row.total} (uncoalesced $${plain?.total ?? 'n/a'}); ${input?.framesPerMessage} frames per message per member, ${input?.measured ? 'measured' : 'a parameter, so not judged'}`,
    // Judged only on a measured frames-per-message figure: on the parameter it would judge an assumption.
    pass: row && input?.measured ? row.total <= 30 : null,
  };
}

/** The service over the Pusher protocol ÷ over its native one at N = 100, per workload: deliveries/s and p99. */
function pusherGoals(result: Realtime): Goal[] {
  const n = PUSHER_RECEIVERS;
  const ran = result.targets.some((t) => t.target === 'pusher');
  const skipped = `not run: N = ${n} is not among the room sizes (\`BENCH_RECEIVERS\`)`;
  const p99Limit = Number((1 / PUSHER_RATIO).toPrecision(3));
  return (['client', 'message'] as const).flatMap((workload) => {
    const pusher = find(result, 'pusher', workload, n);
    const native = find(result, 'service', workload, n);
    const [pusherMax, nativeMax] = [maxDeliveries(pusher), maxDeliveries(native)];
    const throughputRatio = pusherMax !== null && nativeMax ? pusherMax / nativeMax : null;
    const [pusherP99, nativeP99] = [pusher?.fixed.latencyMs.p99, native?.fixed.latencyMs.p99];
    const p99Ratio = pusherP99 !== undefined && nativeP99 ? pusherP99 / nativeP99 : null;
    const floors = [pusher, native].some((s) => s?.search.failedAt === null)
      ? `; ${[pusher?.search.failedAt === null ? 'Pusher' : '', native?.search.failedAt === null ? 'native' : ''].filter(Boolean).join(' and ')} never failed, so a floor`
      : '';
    return [
      {
        id: `realtime.pusher.${workload}.deliveries.n${n}`,
        name: `${frameName(workload)} deliveries/s at N = ${n}, service over Pusher protocol ÷ over its native protocol (highest rate with p99 ≤ ${P99_BOUND_MS} ms, all delivered)`,
        target: `≥ ${PUSHER_RATIO} ×`,
        measured: !ran
          ? skipped
          : throughputRatio === null
            ? `n/a (Pusher ${pusherMax ?? 'none'}, native ${nativeMax ?? 'none'})`
            : `${Number(throughputRatio.toPrecision(2))} × (${pusherMax} vs ${nativeMax} /s${floors})`,
        pass: ran ? throughputRatio !== null && throughputRatio >= PUSHER_RATIO : null,
      },
      {
        id: `realtime.pusher.${workload}.p99.n${n}`,
        name: `${frameName(workload)} p99 at N = ${n} and the fixed rate, service over Pusher protocol ÷ over its native protocol`,
        target: `≤ ${p99Limit} × (native ÷ Pusher ≥ ${PUSHER_RATIO})`,
        measured: !ran ? skipped : p99Ratio === null ? 'n/a' : `${Number(p99Ratio.toPrecision(3))} × (${pusherP99} vs ${nativeP99} ms)`,
        pass: ran ? p99Ratio !== null && p99Ratio <= p99Limit && pusher?.fixed.deliveredShare === 1 : null,
      },
    ];
  });
}

/** CPU milliseconds the server under test spent per delivery in the window at its highest passing rate. */
function cpuPerDelivery(result: Realtime, target: TargetKind, n: number) {
  const window = find(result, target, 'client', n)?.search.atMax;
  if (!window?.deliveriesPerSecond || window.serverCpuPercent === null) return undefined;
  return (window.serverCpuPercent * 10) / window.deliveriesPerSecond;
}

function misses(missed: readonly Goal[], result: Realtime): string[] {
  return missed.map((goal) => {
    if (goal.id.startsWith('realtime.client.deliveries.n')) {
      const n = Number(goal.id.slice('realtime.client.deliveries.n'.length));
      const service = cpuPerDelivery(result, 'service', n);
      const soketi = cpuPerDelivery(result, 'soketi', n);
      const cpu =
        service && soketi
          ? ` At their highest passing rates the service spent ${fmt(service, 2)} ms of CPU per delivery against Soketi's ${fmt(soketi, 3)} ms (${fmt(service / soketi, 0)} ×).`
          : '';
      return `- **${goal.name}** (${goal.measured}): every delivery is one \`PostToConnection\`, because that is the only way API Gateway lets a Lambda reach a socket (locally handed straight to the gateway's socket, \`LOCAL_CONNECTIONS_TRANSPORT=direct\`), after the frame's own \`$default\` work (its rate-limit window and the Query of the room's connections); Soketi writes to its own sockets in C++.${cpu} On one machine that CPU caps the rate. On AWS the posts of rooms past \`REALTIME_FANOUT_QUEUE_THRESHOLD\` run in parallel realtime-worker invocations, so no single process carries them; the local figure is a lower bound on what a deployment does, not a measure of it.`;
    }
    if (goal.id.startsWith('realtime.pusher.')) {
      const workload = goal.id.split('.')[2] as Workload;
      const of = (rows: readonly CostRow[]) => rows.find((r) => r.workload === workload && r.receivers === PUSHER_RECEIVERS);
      const [pusher, native] = [of(result.pusherCost), of(result.cost.rows)];
      const handlerMs = (row: CostRow) => fmt((row.lambdaGbSeconds * 1000 * 1024) / defaultMemorySizeMb, 1);
      const work =
        pusher && native
          ? ` Per frame the Pusher path made ${fmt(pusher.dynamo.requestsMedian, 0)} DynamoDB requests against the native path's ${fmt(native.dynamo.requestsMedian, 0)}, and its handlers ran ${handlerMs(pusher)} ms against ${handlerMs(native)} ms.`
          : '';
      const why =
        workload === 'client'
          ? " A Pusher `client-*` event reads its socket, then its subscription (`findSubscription`, a consistent GetItem), then takes the rate limit, then reads the room's connections, one after another; the native frame router reads the socket and then takes the rate limit and the connection list side by side."
          : '';
      return `- **${goal.name}** (${goal.measured}):${work}${why} The two legs run one after the other on a shared machine, so a change of load between them moves the ratio too (the "Other CPU %" column).`;
    }
    if (goal.id.endsWith('.dynamoFlat')) {
      return `- **${goal.name}** (${goal.measured}): a frame's requests or write units changed with the room's size; each frame should make one read of the room's connection list (one Query of its shards, whatever their number) and the same writes.`;
    }

    return `- **${goal.name}**: ${goal.measured}.`;
  });
}

const errors = (w: WindowFigures) =>
  Object.entries(w.senderErrors)
    .map(([code, count]) => `${count} × ${code}`)
    .join(', ');

function delivered(w: WindowFigures): string {
  const extra = [errors(w), w.duplicates ? `${w.duplicates} duplicates` : ''].filter(Boolean).join('; ');
  return `${fmt(w.deliveredShare * 100, 2)} %${extra ? ` (${extra})` : ''}`;
}

const rows = (result: Realtime, row: (s: Series, target: TargetResult) => (string | number)[]) =>
  result.targets.flatMap((target) => target.series.map((s) => [target.label, frameName(s.workload), s.receivers, ...row(s, target)]));

function fixedRows(result: Realtime) {
  return rows(result, ({ fixed: w }) => [
    `${w.sent} / ${w.expected}`,
    delivered(w),
    fmt(w.deliveriesPerSecond, 0),
    fmt(w.latencyMs.p50, 1),
    fmt(w.latencyMs.p99, 1),
    fmt(w.latencyMs.max, 1),
    fmt(w.serverCpuPercent, 0),
    `${fmt(w.receiversCpuPercent, 0)} / ${w.receiversElu.toFixed(2)}`,
    fmt(w.otherCpuPercent, 0),
  ]);
}

function searchRows(result: Realtime) {
  return rows(result, (s) => {
    const best = s.search.atMax;
    const steps = [s.fixed, ...s.search.steps]
      .map((w) => `${fmt(w.rate, 2)} ${w.pass ? '✓' : '✗'}${w.settled ? '' : ' (backlog)'}`)
      .join(', ');
    return [
      best
        ? `${fmt(best.rate, 2)}${s.search.failedAt === null ? ' (never failed: a floor)' : ''}`
        : `none (< ${fmt(s.search.failedAt, 2)})`,
      best ? fmt(maxDeliveries(s), 0) : 'n/a',
      best ? `${fmt(best.latencyMs.p50, 1)} / ${fmt(best.latencyMs.p99, 1)}` : 'n/a',
      fmt(s.search.failedAt, 2),
      `${steps}${s.search.truncated ? ' (time budget)' : ''}`,
    ];
  });
}

function ratioTable(result: Realtime): string {
  const ratio = (a: number | null | undefined, b: number | null | undefined) =>
    a === null || a === undefined || !b ? 'n/a' : `${Number((a / b).toPrecision(2))} ×`;
  /** Highest-rate ratio; a side that never failed is a floor, which bounds the ratio one way only. */
  const rateRatio = (service: Series | undefined, base: Series | undefined) => {
    const value = ratio(maxDeliveries(service), maxDeliveries(base));
    if (value === 'n/a') return service && !service.search.atMax ? '0 (none passed)' : value;
    const [serviceFloor, baseFloor] = [service?.search.failedAt === null, base?.search.failedAt === null];
    return serviceFloor && baseFloor ? `${value} (both floors)` : baseFloor ? `≤ ${value}` : serviceFloor ? `≥ ${value}` : value;
  };
  const baselines = result.soketi ? (['soketi', 'plain'] as const) : (['plain'] as const);
  const names = { soketi: 'Soketi', plain: 'plain ws' };
  const body = result.receivers.flatMap((n) =>
    (['client', 'message'] as const).map((workload) => {
      const service = find(result, 'service', workload, n);
      const bases = baselines.map((base) => find(result, base, 'client', n));
      return [
        n,
        frameName(workload),
        ...bases.map((base) => rateRatio(service, base)),
        ...bases.map((base) => ratio(service?.fixed.latencyMs.p99, base?.fixed.latencyMs.p99)),
      ];
    }),
  );
  return table(
    ['N', 'Service frame', ...baselines.map((b) => `Deliveries/s ÷ ${names[b]}`), ...baselines.map((b) => `p99 ÷ ${names[b]}`)],
    body,
  );
}

/** The Pusher leg beside the native one at N = 100: the figures side by side and the work per frame of each. */
function pusherSection(result: Realtime): string {
  const n = PUSHER_RECEIVERS;
  const target = result.targets.find((t) => t.target === 'pusher');
  if (!target) return `### Pusher protocol ÷ native protocol, N = ${n}\n\nNot run: N = ${n} is not among the room sizes.\n`;
  const body = (['client', 'message'] as const).flatMap((workload) =>
    (['service', 'pusher'] as const).map((kind) => {
      const series = find(result, kind, workload, n);
      const costRow = (kind === 'pusher' ? result.pusherCost : result.cost.rows).find((r) => r.workload === workload && r.receivers === n);
      const best = series?.search.atMax;
      return [
        frameName(workload),
        kind === 'pusher' ? 'Pusher (pusher-js)' : 'native (ws)',
        best
          ? `${fmt(maxDeliveries(series), 0)}${series?.search.failedAt === null ? ' (floor)' : ` (< ${fmt((series?.search.failedAt ?? 0) * n, 0)})`}`
          : 'none',
        series ? `${fmt(series.fixed.latencyMs.p50, 1)} / ${fmt(series.fixed.latencyMs.p99, 1)}` : 'n/a',
        series ? fmt(series.fixed.serverCpuPercent, 0) : 'n/a',
        best ? `${fmt(best.serverCpuPercent, 0)} / ${fmt(best.receiversCpuPercent, 0)} (${best.receiversElu.toFixed(2)})` : 'n/a',
        costRow
          ? `${fmt(costRow.dynamo.requestsMedian, 0)}: ${Object.entries(costRow.dynamo.byCommand)
              .map(([command, count]) => `${command} ${fmt(count, 2)}`)
              .join(', ')}`
          : 'n/a',
        costRow ? `${fmt(costRow.lambdaInvocations, 2)} / ${fmt((costRow.lambdaGbSeconds * 1000 * 1024) / defaultMemorySizeMb, 1)}` : 'n/a',
        costRow ? fmt(costRow.postToConnection, 2) : 'n/a',
      ];
    }),
  );
  return `### Pusher protocol ÷ native protocol, N = ${n}

The service's own two protocols, one server: right after the native series at N = ${n}, a second receivers child connects ${n} pusher-js clients (the same users) to \`/app/<key>\` of the same runtime, in a room of their own, and the same windows and search run over them (the native receivers stay connected and idle meanwhile). Each subscription's auth comes from \`POST /auth/channel\` with the receiver's own token, at connect, outside the measured windows. A \`client-*\` event is \`channel.trigger("client-bench", data)\` from a pusher-js sender; a persisted message has no Pusher frame, so the sender's user posts it on a native socket of the room and the receivers get the Pusher event \`message\`. So each frame of the Pusher leg reaches one socket more than the native leg's (the sender's other socket), about 1 % of the posts. The work per frame is counted as in "AWS work per frame" below, ${COST.frames} frames one at a time; "handler ms" is the handlers' summed wall time per frame. Both legs share the machine's cores with their clients, and pusher-js clients take more CPU per delivery than bare \`ws\` ones (the receivers CPU columns), which the server then does not have.

${table('Frame | Protocol | Deliveries/s (highest passing; first failing) | Fixed rate p50 / p99 ms | Server CPU % at the fixed rate | Server / receivers CPU % (receivers ELU) at the highest passing rate | DynamoDB requests per frame (median: by command, mean) | Lambda invocations / handler ms per frame | PostToConnection', body)}
`;
}

/** The queued fan-out leg: each server's room grown in waves to its size, and one saturating burst. */
function queuedSection(result: Realtime): string {
  const n = result.queuedReceivers;
  if (!n)
    return `### Queued fan-out, N = ${QUEUED.defaultReceivers.toLocaleString('en-US')}\n\nNot run: ${
      result.soketi
        ? '`BENCH_QUEUED_RECEIVERS` is 0 or not above the largest room of the series'
        : `it runs beside Soketi, its baseline. ${SOKETI_SKIPPED}`
    }.\n`;
  const rows = (['soketi', 'service'] as const).map((kind) => {
    const target = result.targets.find((t) => t.target === kind);
    const leg = target?.queued;
    const burst = queuedBurst(leg);
    if (!leg || !burst)
      return [target?.label ?? kind, leg && 'error' in leg ? `stopped: ${leg.error}` : 'not run', ...Array(8).fill('n/a')];
    const waves = 'waves' in leg ? leg.waves : [];
    return [
      target?.label ?? kind,
      `${fmt(('connectMs' in leg ? leg.connectMs : 0) / 1000, 1)} s (${waves.map((w) => fmt(w.ms / 1000, 1)).join(', ')})`,
      `${burst.sent} / ${burst.expected}`,
      delivered(burst),
      `**${fmt(burst.deliveriesPerSecond, 0)}**`,
      `${fmt(burst.latencyMs.p50, 0)} / ${fmt(burst.latencyMs.p99, 0)} / ${fmt(burst.latencyMs.max, 0)}`,
      fmt(burst.serverCpuPercent, 0),
      `${fmt(burst.receiversCpuPercent, 0)} / ${burst.receiversElu.toFixed(2)}`,
      fmt(burst.otherCpuPercent, 0),
      'queuedJobs' in leg && leg.queuedJobs !== null ? fmt(leg.queuedJobs, 0) : '—',
    ];
  });
  return `### Queued fan-out, N = ${n.toLocaleString('en-US')}

After its series, each server's receivers child grows the same room to ${n.toLocaleString('en-US')} receivers in waves of ${QUEUED.wave} (${QUEUED.concurrency} handshakes in flight, each within ${QUEUED.timeoutMs / 1000} s, a ${QUEUED.pauseMs} ms pause between waves; the service's \`$connect\` reads the whole room's list, so its waves slow as the room fills), then the sender offers one burst of ${QUEUED.frames} \`client-*\` events at ${QUEUED.rate} per second (${fmt((QUEUED.rate * n) / 1000, 0)}k deliveries/s offered, more than either server delivers here), and every delivery is waited for up to ${QUEUED.drainMs / 1000} s. Deliveries/s are all deliveries over first send → last delivery: each server's delivery capacity at this size, with no latency bound. On the service the room is past \`REALTIME_FANOUT_QUEUE_THRESHOLD\` (200), so \`$default\` reads the list once per frame, splits it into jobs of \`REALTIME_FANOUT_BATCH_SIZE\` (100) connections and sends them to the realtime queue; the \`RealtimeWorker\` consumer (batches of 10, up to 8 at once) posts them, all in this one process here (on AWS, parallel invocations). The receivers child holds ${n.toLocaleString('en-US')} clients (pusher-js for Soketi, bare \`ws\` for the service): its ELU near 1 means the clients set the pace, which caps Soketi's figure more than the service's, so the ratio then flatters the service.

${table('Server | Time to grow (waves, s) | Sent / expected deliveries | Delivered | Deliveries/s | p50 / p99 / max ms | Server CPU % | Receivers CPU % / ELU | Other CPU % | RealtimeWorker invocations', rows)}
`;
}

function costSection(result: Realtime): string {
  const costRows = result.cost.rows.map((row) => [
    frameName(row.workload),
    row.receivers,
    `${row.complete} / ${row.frames}`,
    `${fmt(row.dynamo.requestsMedian, 2)} / ${fmt(row.dynamo.requestsMean, 2)}`,
    Object.entries(row.dynamo.byCommand)
      .map(([command, count]) => `${command} ${fmt(count, 2)}`)
      .join(', '),
    `${fmt(row.dynamo.writeUnits, 2)} / ${fmt(row.dynamo.readUnits, 2)}`,
    `${fmt(row.sqs.handlers, 2)} + ${fmt(row.sqs.consumers, 2)} / ${fmt(row.snsPublishes, 2)}`,
    `${fmt(row.lambdaInvocations, 2)} / ${fmt(row.lambdaGbSeconds * 1000, 2)}`,
    `${fmt(row.postToConnection, 2)}${row.postToConnectionGone ? ` (${fmt(row.postToConnectionGone, 2)} gone)` : ''}`,
    fmt(row.apiGatewayMessages, 2),
  ]);
  const prices = result.cost.rows.map((row) => {
    const [largest] = Object.entries(row.pricePerMillion).sort((a, b) => b[1] - a[1]);
    return [
      frameName(row.workload),
      row.receivers,
      ...Object.values(row.pricePerMillion).map((price) => `$${fmt(price, 3)}`),
      `**$${fmt(row.pricePerMillionTotal, 2)}**`,
      largest ? `${largest[0]} (${fmt((100 * largest[1]) / row.pricePerMillionTotal, 0)} %)` : 'n/a',
    ];
  });
  const priceHeader = Object.keys(result.cost.rows[0]?.pricePerMillion ?? { DynamoDB: 0, 'SQS + SNS': 0, 'API Gateway': 0, Lambda: 0 });
  // Pings are answered by API Gateway itself (the synth section reads the MOCK route from the template).
  const hour = idleConnectionHour(0);
  return `### AWS work per frame (service)

Frames are sent one at a time after ${COST_WARMUP} warm-up frames, each waited for until every receiver has it (and, for a message, the sender its \`ack\`); the counts are divided by the number of frames. DynamoDB requests and capacity units are counted by SDK middleware on the handlers' own client (\`bench/instrument.ts\`, as in section 1; "median" is per frame, the rest are means); SQS requests are the handlers' (realtime jobs) plus the local queue consumers' non-empty receives and batch deletes (the long polls that come back empty are a fixed cost of an SQS event source, not a per-frame one, and are left out); SNS publishes are the event publisher's (a message's domain events, from the table stream); Lambda invocations are every handler run the frame caused (\`$default\`, the stream's event publisher, queue consumers), with their summed wall time here as GB-ms at ChatFunction's ${defaultMemorySizeMb} MB; \`PostToConnection\` calls are the local gateway's count of management API posts (\`runtime.gateway.managementStats()\`), the ack to the sender included.${result.cost.error ? `\n\n**Not complete:** ${result.cost.error}` : ''}

${costRows.length ? table('Frame | N | Complete | DynamoDB requests median / mean | By command (mean) | WU / RU | SQS requests handlers + consumers / SNS publishes | Lambda invocations / GB-ms | PostToConnection | API Gateway messages', costRows) : '_No cost figures._'}

### Cost per million frames

Per million frames at rooms of 10 and 100 members, from the counts above and us-east-1 list prices: DynamoDB on-demand $${PRICES.dynamoPerMillionWriteUnits}/M WRU and $${PRICES.dynamoPerMillionReadUnits}/M RRU (the table stream's reads by Lambda are free); SQS $${PRICES.sqsPerMillionRequests}/M requests (each under 64 KB) and SNS $${PRICES.snsPerMillionPublishes}/M publishes (delivery to SQS is free); API Gateway WebSocket $${PRICES.apiGatewayWebSocketPerMillionMessages}/M messages, counting the inbound frame and each \`PostToConnection\` as one 32 KB unit; Lambda $${PRICES.lambdaPerMillionInvocations}/M requests plus $${PRICES.lambdaPerGbSecondArm}/GB-s (ARM64) at ${defaultMemorySizeMb} MB, the duration taken from the handlers' wall time here, where DynamoDB Local answers in about a millisecond (DynamoDB on AWS takes a few, so AWS durations run somewhat longer; Lambda's line stays small either way). Connection minutes are a cost of being connected, not of traffic, so they are priced per connected member-hour below.

${prices.length ? table(['Frame', 'N', ...priceHeader, 'Total per million frames', 'Largest line'], prices) : ''}

Per connected member-hour, idle: ${hour.lines.map(([name, dollars]) => `${name} $${dollars.toPrecision(2)}`).join(', ')}; **$${hour.total.toPrecision(2)}** in all, of which ${hour.largest} is the largest. A connected member costs this whether or not anyone writes; a message then adds its share of the table above.
`;
}

function section(result: Realtime): string {
  const s = result.settings;
  const software = result.targets.map(
    (t) => `- **${t.label}**: ${t.software}${t.error ? ` — **stopped early:** ${t.error}` : ''} (${fmt(t.seconds, 0)} s)`,
  );
  if (!result.soketi)
    software.splice(1, 0, `- **Soketi**: skipped. ${SOKETI_SKIPPED}; its rows, ratios and the goals against it are then left out.`);
  const connectRows = result.targets.map((t) => [
    t.label,
    ...result.receivers.map((n) => fmt(t.connect.find((c) => c.receivers === n)?.ms, 0)),
  ]);
  const notes = [...result.notes, ...result.targets.filter((t) => t.error).map((t) => `${t.label} stopped early: ${t.error}`)];
  return `## Realtime fan-out

One room, N = ${result.receivers.join(', ')} receivers and one sender; load average ${result.loadAverageAtStart} when this section started, ${fmt(result.seconds, 0)} s in all. The same workload runs against ${result.soketi ? 'three servers' : 'two servers (three with Soketi)'}, and the service also over the Pusher protocol at N = ${PUSHER_RECEIVERS}:

${software.join('\n')}

What runs where: the server under test is the bench process (plain \`ws\`, and the service with everything the local runtime hosts in process, plus DynamoDB Local's JVM) or its own child process (Soketi). The sender and all N receivers live in a separate receivers child (\`bench/realtime/receivers.ts\`, one per target), so client CPU is never charged to the server; they still share the machine's cores with it. The sender stamps every frame with its send time (\`performance.timeOrigin + performance.now()\`, one clock for the whole machine); each receiver takes its receipt time on the same clock. Latency is send → receipt over every delivery; deliveries per second are deliveries over first send → last delivery. Before every window the room must go quiet (no frame for ${s.quietMs} ms), so a window never starts on the backlog of the last one. The sender offers frames open loop (each at its time, whatever came back). A \`client-*\` event is \`{ type: "client-bench", data }\` on the service and the plain server and \`channel.trigger("client-bench", data)\` on a Soketi private channel (authorized by an HMAC signature the child makes itself); a message is the service's \`{ type: "message", content }\` frame, stored and fanned out as \`{ type: "message", message }\`. Every frame carries the same 120-character text.

- **Fixed rate**: ${s.fixedRate} frames/s, but at most ${s.fixedDeliveries} deliveries/s (so ${result.receivers.map((n) => `${fmt(fixedRateFor(n), 2)} at N = ${n}`).join(', ')}), for ${s.fixedFrames} frames or at most ${fmt(s.fixedWindowMaxMs / 1000, 1)} s (so ${result.receivers.map((n) => `${fmt((fixedWindowMsFor(n) * fixedRateFor(n)) / 1000, 3)} frames at N = ${n}`).join(', ')}): a frame's deliveries arrive together, so frames are p99's independent samples, and at fewer than 100 p99 is the slowest frame; late deliveries are waited for up to ${fmt(s.fixedDrainMs / 1000, 1)} s after the last send.
- **Highest rate**: starting from the fixed window, up to ${s.searchSteps} more windows of ${fmt(s.searchWindowMs.min / 1000, 1)}–${fmt(s.searchWindowMs.max / 1000, 1)} s (at least ${s.searchFrames} frames): ×${s.searchFactor} after a pass, ÷${s.searchFactor} after a failure, the geometric middle once a pass and a failure bracket the limit. A window passes when every frame reached every receiver within ${fmt(s.searchDrainMs / 1000, 1)} s of the last send, p99 ≤ ${P99_BOUND_MS} ms and the sender got no error frame. The figure is the highest passing rate tried, so it is a lower bound on the limit, which lies below the first failing rate; when nothing failed it is only a floor. The search gives up early when a failing window had no queueing at all (each frame delivered before the next was sent): then one frame alone takes longer than the bound and no lower rate passes. Each target's searches stop taking steps after its time budget (${Object.entries(
    result.budgetSeconds,
  )
    .map(([target, seconds]) => `${target} ${seconds} s`)
    .join(', ')}).

Server CPU is the server under test's processes (the bench process for plain \`ws\`; Soketi's process; the bench process plus DynamoDB Local for the service), in % of one core over the window; the receivers' CPU and event-loop utilization (ELU) tell whether the clients could keep up: an ELU near 1 means the receivers child, not the server, set the pace. "Other" is every other process on the machine (busy time from \`/proc/stat\` less the two), which should be near 0.

### Goals

${goalTable(goals(result))}

### At the fixed rate

${table('Server | Frame | N | Sent / expected deliveries | Delivered | Deliveries/s | p50 ms | p99 ms | max ms | Server CPU % | Receivers CPU % / ELU | Other CPU %', fixedRows(result))}
${
  result.floor
    ? `\nThe database's share of a service \`client-*\` frame: the two requests \`$default\` makes for one (the connection's rate-limit window and the room's connection list), made in parallel through the handlers' own client at N = ${FLOOR_RECEIVERS} and ${fmt(result.floor.rate, 2)} pairs/s, so DynamoDB Local is as idle as a frame finds it, took p50 ${result.floor.p50}, p90 ${result.floor.p90} and at most ${result.floor.max} ms over ${result.floor.pairs} pairs (\`bench/realtime/database-floor.ts\`). Soketi has no database on its path; this much of the service's latency over Soketi's is DynamoDB Local's answer time (p50 ${result.floor.backToBackP50} ms for the same pairs back to back: the rest is the idle gap), which no handler change removes while a frame's rate limit and list read stay per frame, as on AWS. So the N = ${FLOOR_RECEIVERS} p99 goal above judges the service's fixed-rate p99 against Soketi's p99 plus this p50, all three from this run.\n`
    : ''
}
### Highest rate with p99 ≤ ${P99_BOUND_MS} ms and every frame delivered

${table('Server | Frame | N | Highest passing rate (frames/s) | Deliveries/s there | p50 / p99 ms there | First failing rate | Rates tried (✓ pass, ✗ fail)', searchRows(result))}

${pusherSection(result)}
${queuedSection(result)}
### Service ÷ baselines

Deliveries per second at the highest passing rate, and p99 at the fixed rate; the baselines carry \`client-*\` events only (they store nothing), so the message rows compare a persisted message with a relayed event. "≤" marks a ratio whose baseline never failed (its figure is a floor, so the true ratio is at most this).

${ratioTable(result)}

### Time to connect

Milliseconds to grow the room to N (from the previous N, the sender first), every new socket ready: open (plain), subscribed (Soketi), or its \`connected\` frame received (service), ${CONNECT.concurrency} at a time.

${table(['Server', ...result.receivers.map((n) => `N = ${n}`)], connectRows)}

${costSection(result)}
${renderCostModel(result.model, result.idle)}
${notes.length ? `\n### Notes\n\n${notes.map((note) => `- ${note}`).join('\n')}\n` : ''}`;
}

export const realtime: Bench<Realtime> = {
  id: 'realtime',
  name: 'Realtime',
  needs: 'service',
  run: measure,
  goals,
  misses,
  section,
};
