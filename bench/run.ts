/**
 * `npm run bench`: every benchmark in one run (about 6 to 9 minutes on 2 cores), through the one
 * harness of bench/harness.ts. It starts the local runtime, runs the benches that need it, stops
 * it, runs the others, and writes bench/results/latest.json and docs/performance.md (whole file).
 *
 *   1. message cost: DynamoDB requests / capacity units and SQS/SNS requests per message
 *   2. POST /messages throughput and latency at 1 and 16 senders beside raw PutItem
 *   3. every function's bundle size and module init time
 *   4. local runtime ready time (in-process `startLocalRuntime`, and `npm start` as a child)
 *   5. domain events (write → webhook receiver and → watcher frame) and webhook delivery
 *   6. CDK synth: time, resources and template size per stack, today and with 150 more routes
 *   7. push notifications: encryption CPU, sender rate, recipients' cost, message → push latency
 *   8. AI helpers: a thread summary's DynamoDB requests and service time, the largest prompt
 *   9. sign-in and stream caps: CPU per sign-in attempt (correct, wrong password, unknown user,
 *      unknown project), DynamoDB requests per sign-in, and to take and give back a stream's leases
 *  10. inbox and activity feed: DynamoDB requests per notification created, per feed page of a
 *      user in 500 rooms, and POST /messages with and without an @mention
 *  11. realtime fan-out to 10 / 100 / 1,000 WebSocket receivers beside a plain ws server (and
 *      Soketi, opt-in), the service over the Pusher protocol beside its native one at 100, and
 *      the AWS work per realtime frame
 *  12. the daily digest: users per second through an admin run of 5,000 subscribers (in-app,
 *      web push and e-mail stand-ins), DynamoDB requests per user
 *  13. uploads: 1 MiB files through POST /upload beside a direct PutObject to the same S3 stand-in
 *  14. the message lifecycle: DynamoDB requests per reaction and per edit, and a reaction storm
 *      (1,000 reactions on one message) with its final counts
 *  15. the embed widget: embed.js raw and gzipped, script request to widget ready and guest
 *      session to first message in headless Chromium
 *  16. bridges: signed Slack events per second beside POST /messages, the requests of a message in
 *      a room without a bridge; room message → arrival at local Slack, Discord and Matrix
 *      stand-ins, and the relay's invocations for rooms without a bridge
 *  17. hot rooms: coalesced delivery to 100 `batch=1` receivers (and a few without) of a room the
 *      service's heat turned hot, a sender at 20 msg/s, beside the same room kept quiet, each on a
 *      runtime of its own: deliveries, send → receive p50/p99, frames and API Gateway messages per
 *      message
 *
 * Knobs (environment variables), for quick iterations and the opt-in parts:
 *
 *   BENCH_MESSAGES=200        messages per message-cost scenario
 *   BENCH_MEASURE_MS=5000     each throughput measurement (two halves per workload and concurrency)
 *   BENCH_INIT_RUNS=5         fresh node processes per module init figure
 *   BENCH_RECEIVERS=10,100,1000  realtime room sizes
 *   BENCH_DIGEST_USERS=5000   subscribers of the digest run
 *   BENCH_WIDGET_RUNS=10      page loads per embed widget figure
 *   BENCH_SOKETI=1            also measure Soketi as a realtime baseline (or `npm run bench -- --soketi`);
 *                             without it the realtime section reports the service and the plain ws server.
 *                             Soketi is no dependency of the project: the first such run installs it
 *                             into bench/soketi (`npm ci` from its own lock; needs the npm registry)
 *   BENCH_QUEUED_RECEIVERS=5000  with Soketi: the realtime section's queued fan-out room (0 to skip it)
 *   BENCH_HOT_RECEIVERS=100   hot rooms: receivers with `batch=1` in the room
 *   BENCH_HOT_SINGLES=3       hot rooms: receivers without `batch=1` in the same room (single frames)
 *   BENCH_HOT_RATE=20         hot rooms: the sender's messages per second (over HTTP); the cost model
 *                             reads the measured frames per message as its busy rate's (20 msg/s)
 *   BENCH_HOT_SECONDS=10      hot rooms: how long the sender sends
 *                             (REALTIME_COALESCE_WINDOW_MS and the other service settings in the
 *                             environment reach the hot-rooms runtimes as they reach the bench's own)
 *   BENCH_COALESCED_FRAMES_PER_MESSAGE  the cost model's coalesced frames per message per member, when no bench result gives it
 *   BENCH_ONLY=realtime,...   run only these benches (ids: messageCost, throughput, auth, notifications,
 *                             lifecycle, bridgeInbound, stats, webhooks, events, push, ai, digest, uploads, widget, bridgeRelay, realtime, hotRooms,
 *                             bundles, ready, synth) and print their sections (and the lines "Misses" would give them)
 *                             instead of writing the results and the doc
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startLocalRuntime } from '../lib/local/runtime';
import { startBridgePlatforms } from '../test/support/bridge-platforms';
import { ai } from './ai';
import { auth } from './auth';
import { bridgeInbound, bridgeRelay } from './bridges';
import { bundles } from './bundles';
import { digest } from './digest';
import { events } from './events';
import { type Bench, type Context, type Goal, machine, type Results, readSettings, renderReport } from './harness';
import { hotRooms } from './hot-rooms';
import { lifecycle } from './lifecycle';
import { messageCost } from './message-cost';
import { notifications } from './notifications';
import { push } from './push';
import { ready } from './ready';
import { realtime } from './realtime/index';
import { stats } from './stats';
import { synth } from './synth';
import { throughput } from './throughput';
import { uploads } from './uploads';
import { Api, BENCH_OPERATOR_KEY, repoRoot, round } from './util';
import { webhooks } from './webhooks';
import { widget } from './widget';

/**
 * In the order they run. The message figures come first, with the queue consumers still off so
 * they add no requests; sign-in follows while they are still off, as their work would count in its
 * CPU figures; the webhook bench starts them; realtime comes last on the runtime because
 * it fills rooms with up to 1,000 sockets; the `machine` benches run once the runtime is stopped.
 */
const runOrder: readonly Bench[] = [
  messageCost,
  throughput,
  auth,
  // Before the webhook bench starts the consumers, so no subscriber's requests fall into its counts.
  notifications,
  // The request path alone, with the consumers off as well.
  bridgeInbound,
  stats,
  // Counts its requests with the consumers still off, then starts them for its reaction storm.
  lifecycle,
  webhooks,
  events,
  push,
  ai,
  digest,
  uploads,
  widget,
  bridgeRelay,
  realtime,
  // Its own runtimes, in child processes: the first of the `machine` benches, once the bench's runtime has stopped.
  hotRooms,
  bundles,
  ready,
  synth,
];
/** In the order of docs/performance.md. */
const reportOrder: readonly Bench[] = [
  messageCost,
  throughput,
  bundles,
  ready,
  events,
  webhooks,
  push,
  ai,
  notifications,
  lifecycle,
  digest,
  auth,
  uploads,
  synth,
  realtime,
  hotRooms,
  widget,
  bridgeInbound,
  bridgeRelay,
  stats,
];

const settings = readSettings(process.env, process.argv);
const only = process.env.BENCH_ONLY?.split(',').map((id) => id.trim());
const benches = runOrder.filter((bench) => !only || only.includes(bench.id));
const unknown = only?.filter((id) => !runOrder.some((bench) => bench.id === id)) ?? [];
if (unknown.length) throw new Error(`BENCH_ONLY: no bench ${unknown.join(', ')}; the ids are ${runOrder.map((b) => b.id).join(', ')}`);

const log = (line: string) => console.log(line);
const benchStarted = performance.now();
// Captured before the local runtime writes its settings into process.env, for child processes.
const baseEnv = { ...process.env };
const machineInfo = machine();
log(
  `Machine: ${machineInfo.cpus} × ${machineInfo.cpuModel}, ${machineInfo.memoryGiB} GiB, Node ${machineInfo.node}, DynamoDB Local ${machineInfo.dynamoDbLocal}, load ${machineInfo.loadAverageAtStart}`,
);
log(`Settings: ${JSON.stringify(settings)}`);

// Slack's and Discord's APIs, played locally, for the bridge relay (a Matrix bridge names its own homeserver).
const bridgePlatforms = await startBridgePlatforms();
const readyStarted = performance.now();
const runtime = await startLocalRuntime({
  port: 0,
  // Off until the webhook bench, so the queue consumers add no requests to the message figures.
  consumers: false,
  // Rate limits out of the way: the throughput senders and the realtime client events go faster than a client may.
  env: {
    CHAT_OPERATOR_KEY: BENCH_OPERATOR_KEY,
    RATE_LIMIT_MESSAGES_PER_MINUTE: '100000000',
    RATE_LIMIT_CLIENT_EVENTS_PER_SECOND: '1000000',
    WEBHOOK_RETRY_TIME_SCALE: '0.001',
    RATE_LIMIT_UPLOADS_PER_MINUTE: '100000000',
    RATE_LIMIT_BRIDGE_INBOUND_PER_IP_PER_MINUTE: '100000000',
    // The benches' rooms never turn hot by themselves: their figures are of the sender's immediate
    // path (the realtime rates pass 5 messages a second); hot rooms have a bench of their own (hotRooms).
    REALTIME_COALESCE_THRESHOLD_PER_SECOND: '100000000',
    ...bridgePlatforms.settings,
  },
});
const readyMs = round(performance.now() - readyStarted, 0);
log(`Local runtime ready in ${readyMs} ms at ${runtime.baseUrl}`);

const results: Record<string, unknown> = {};
const phaseSeconds: Record<string, number> = {};
let running = true;
try {
  // Imported only now: these modules parse their config from process.env at load. The gateway
  // imports handlers by file URL, which resolves to these very module instances.
  const { dynamo } = await import('#shared/db/client');
  const { sqs } = await import('#shared/queue');
  const { sns } = await import('#shared/event-topic');
  const { forgetProject } = await import('#shared/auth');
  const service = { runtime, api: new Api(runtime.baseUrl), readyMs, clients: { dynamo, sqs, sns }, forgetProject };
  const context: Context = { settings, machine: machineInfo, service, baseEnv, log };
  for (const bench of benches) {
    if (bench.needs === 'machine' && running) {
      await runtime.stop();
      running = false;
    }
    log(`\n== ${bench.name}`);
    const started = performance.now();
    try {
      results[bench.id] = await bench.run(context);
    } finally {
      phaseSeconds[bench.name] = round((performance.now() - started) / 1000, 1);
      log(`   (${phaseSeconds[bench.name]} s)`);
    }
  }
} finally {
  if (running) await runtime.stop().catch(() => undefined);
  await bridgePlatforms.close();
}

const ran = reportOrder.filter((bench) => benches.includes(bench));
const judged = { settings, machine: machineInfo, goals: [] as Goal[] };
const run = { ...judged, goals: ran.flatMap((bench) => bench.goals(results[bench.id], judged)) };
log('\n== Goals');
for (const goal of run.goals)
  log(`  ${goal.pass === null ? 'SKIP' : goal.pass ? 'PASS' : 'MISS'}  ${goal.name}: ${goal.measured} (goal ${goal.target})`);
if (only) {
  for (const bench of ran) log(`\n${bench.section(results[bench.id], run)}`);
  // What the doc's "Misses" would list for these benches, for splicing a section into it by hand.
  const missed = ran.flatMap((bench) => {
    const goals = bench.goals(results[bench.id], run).filter((g) => g.pass === false);
    return goals.length ? (bench.misses?.(goals, results[bench.id], run) ?? goals.map((g) => `- **${g.name}**: ${g.measured}.`)) : [];
  });
  if (missed.length) log(`\n== Misses\n\n${missed.join('\n')}`);
} else {
  const benchSeconds = round((performance.now() - benchStarted) / 1000, 1);
  const report: Results = { generatedAt: new Date().toISOString(), benchSeconds, phaseSeconds, ...run, ...results };
  mkdirSync(join(repoRoot, 'bench', 'results'), { recursive: true });
  writeFileSync(join(repoRoot, 'bench', 'results', 'latest.json'), `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(join(repoRoot, 'docs', 'performance.md'), renderReport(report, reportOrder));
  log(`\nWrote bench/results/latest.json and docs/performance.md in ${benchSeconds} s`);
}
// The runtime and its clients are stopped; a lingering keep-alive socket must not hold the process.
process.exit(0);
