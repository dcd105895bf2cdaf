/**
 * Hot rooms: coalesced delivery (issue 29; docs/architecture.md "Hot rooms: coalesced delivery").
 * One room of `receivers` WebSockets that connected with `batch=1` and a few (`singles`) that did
 * not, and a sender posting `POST /messages` at `rate` messages a second for `seconds`, twice, each
 * time on a local runtime of its own in a child process (bench/hot-rooms-runtime.ts; the handlers
 * read the coalescing settings once per process):
 *
 * - **coalesced**: the default settings (`REALTIME_COALESCE_THRESHOLD_PER_SECOND` 5,
 *   `REALTIME_COALESCE_WINDOW_MS` 180). A burst past the threshold before the receivers connect
 *   lets the service's own heat (the event publisher, functions/domain/realtime/room-heat.ts) mark
 *   the room; the bench waits until the room item's `coalesceUntil` is set and the sender's room
 *   cache (`CACHE_TTL_MS`) has run out, so every measured message takes the coalesced path.
 * - **quiet**: the same room size, rate and steps with the threshold out of reach (100,000 a
 *   second): every message broadcast at once by its sender, one frame per message per receiver.
 *
 * The receivers live in the bench process, the runtime in its child: send → receive is from the
 * send's start to the receiver's frame, on one clock. Frames are counted at the receivers (the
 * figures per group) and at the runtime's gateway (`@connections` posts, what API Gateway bills).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { type Bench, fmt, goalTable, loadAverage, type Run, type Settings, table } from './harness';
import type { HotRoomsRuntimeApi, RuntimeSettings } from './hot-rooms-runtime';
import { Api, BENCH_OPERATOR_KEY, createProject, forkIpc, latencySummary, repoRoot, round, sleep, uniqueId } from './util';

/** Messages sent back to back to heat the room: past the default threshold of 5 within a second, twice over. */
const BURST = 12;
/** How long the burst's heat may take to reach the room item before the bench marks the room by hand. */
const HEAT_WAIT_MS = 10_000;
/** Late deliveries are waited for this long after the last send's answer. */
const DRAIN_MS = 30_000;
/** After the sockets closed, for the runtime's `$disconnect` runs to finish before it stops. */
const CLOSE_SETTLE_MS = 2000;
/** Requests made at once while the members are added and tokens taken. */
const SETUP_CONCURRENCY = 8;

const GOAL_MILLIONS = 25;
const UNCOALESCED_MILLIONS = 100;
const GOAL_COALESCED_P99_MS = 250;

/**
 * The quiet-room reference when the last report has none to read: docs/performance.md "Realtime
 * fan-out", the service's fixed-rate persisted message p99 at N = 100 (its realtime section from
 * the BENCH_ONLY=realtime run of 2026-11-27, commit 2894cf1).
 */
const FALLBACK_QUIET_REFERENCE = {
  p99Ms: 71,
  source:
    'docs/performance.md of 2026-11-27 ("Realtime fan-out", fixed rate, message (persisted), N = 100; BENCH_ONLY=realtime run, commit 2894cf1), stated here',
};

type HotRoomSettings = Settings['hotRoom'];

interface GroupResult {
  /** Sockets in the group. */
  readonly sockets: number;
  readonly expected: number;
  /** Distinct (receiver, message) pairs that arrived. */
  readonly delivered: number;
  readonly duplicates: number;
  /** Receivers that saw a message id lower than one they had already seen. */
  readonly outOfOrderReceivers: number;
  /** Frames that carried messages: batch frames and single message frames. */
  readonly frames: number;
  readonly batchFrames: number;
  /** Frames per message per receiver. */
  readonly framesPerMessage: number;
  /** Messages per batch frame (mean). */
  readonly messagesPerBatch: number | null;
  readonly latencyMs: { p50: number; p99: number; max: number };
}

interface PhaseResult {
  readonly kind: 'coalesced' | 'quiet';
  readonly settings: RuntimeSettings;
  /** How the room became coalesced: `heat` (the service's own), `hand` (setRoomCoalesceUntil), or `none` (the quiet room). */
  readonly markedBy: 'heat' | 'hand' | 'none';
  /** Burst start to `coalesceUntil` seen on the room item. */
  readonly heatMs: number | null;
  readonly sent: number;
  readonly senderErrors: number;
  readonly sendMs: number;
  readonly batch: GroupResult;
  readonly singles: GroupResult;
  /** Frames of any other type the receivers got during the measurement (presence, typing...). */
  readonly otherFrames: number;
  /** The gateway's `@connections` posts during the measurement, per message sent. */
  readonly postsPerMessage: number;
  readonly loadAverage: number;
}

export interface HotRoomsResult {
  readonly settings: HotRoomSettings;
  readonly coalescedRun: PhaseResult;
  readonly quiet: PhaseResult;
  /** What bench/cost-model.ts reads from bench/results/latest.json: frames per message per opted-in member. */
  readonly coalesced: { readonly framesPerMessage: number; readonly rate: number; readonly receivers: number };
  /** API Gateway messages per million room messages, in millions, posted to the opted-in receivers. */
  readonly apiGatewayMillions: { readonly coalesced: number; readonly quiet: number };
  readonly quietReference: { readonly p99Ms: number; readonly source: string };
}

/** The last report's quiet-room p99: the fixed-rate message p99 at N = 100 that docs/performance.md shows. */
function quietReference(): { p99Ms: number; source: string } {
  let shown: number | undefined;
  let measured = '';
  try {
    const doc = readFileSync(join(repoRoot, 'docs', 'performance.md'), 'utf8');
    measured = doc.match(/^Measured (\S+ \S+) UTC/m)?.[1] ?? '';
    const row = doc.split('\n').find((line) => line.startsWith('| Service (local runtime) | message (persisted) | 100 |'));
    // | Server | Frame | N | Sent / expected | Delivered | Deliveries/s | p50 ms | p99 ms | ...
    const p99 = Number(row?.split('|')[8]?.trim());
    if (p99 > 0) shown = p99;
  } catch {
    // No report yet.
  }
  let stored: number | undefined;
  let storedAt = '';
  try {
    const report = JSON.parse(readFileSync(join(repoRoot, 'bench', 'results', 'latest.json'), 'utf8'));
    storedAt = report.generatedAt ?? '';
    for (const target of report.realtime?.targets ?? [])
      for (const series of target.series ?? [])
        if (target.target === 'service' && series.workload === 'message' && series.receivers === 100) stored = series.fixed?.latencyMs?.p99;
  } catch {
    // No stored results.
  }
  if (shown !== undefined && stored === shown)
    return {
      p99Ms: shown,
      source: `bench/results/latest.json of ${storedAt} (realtime, fixed rate, message, N = 100), as docs/performance.md shows it`,
    };
  if (shown !== undefined)
    return {
      p99Ms: shown,
      source: `docs/performance.md ("Realtime fan-out", fixed rate, message (persisted), N = 100, in the report of ${measured || 'an unknown date'})${
        stored !== undefined
          ? `; bench/results/latest.json, the last full run (${storedAt}), holds ${stored} ms there: the report's realtime section is from a later \`BENCH_ONLY\` run, which writes no results`
          : ''
      }`,
    };
  if (stored !== undefined)
    return { p99Ms: stored, source: `bench/results/latest.json of ${storedAt} (realtime, fixed rate, message, N = 100)` };
  return FALLBACK_QUIET_REFERENCE;
}

interface Receiver {
  readonly socket: WebSocket;
  readonly batch: boolean;
  /** Message ids in arrival order. */
  readonly ids: number[];
  readonly indexes: Set<number>;
  duplicates: number;
  frames: number;
  batchFrames: number;
  messagesInBatches: number;
  other: number;
  readonly latencies: number[];
}

function summarize(receivers: readonly Receiver[], sent: number): GroupResult {
  const sum = (of: (r: Receiver) => number) => receivers.reduce((total, r) => total + of(r), 0);
  const delivered = sum((r) => r.indexes.size);
  const frames = sum((r) => r.frames);
  const batchFrames = sum((r) => r.batchFrames);
  return {
    sockets: receivers.length,
    expected: sent * receivers.length,
    delivered,
    duplicates: sum((r) => r.duplicates),
    outOfOrderReceivers: receivers.filter((r) => r.ids.some((id, i) => i > 0 && id <= (r.ids[i - 1] as number))).length,
    frames,
    batchFrames,
    framesPerMessage: delivered ? round(frames / delivered, 3) : Number.NaN,
    messagesPerBatch: batchFrames ? round(sum((r) => r.messagesInBatches) / batchFrames, 2) : null,
    latencyMs: latencySummary(receivers.flatMap((r) => r.latencies)),
  };
}

/** Adds members a few at a time. */
async function inBatches<T>(items: readonly T[], run: (item: T) => Promise<unknown>) {
  for (let i = 0; i < items.length; i += SETUP_CONCURRENCY) await Promise.all(items.slice(i, i + SETUP_CONCURRENCY).map(run));
}

async function phase(
  kind: 'coalesced' | 'quiet',
  hot: HotRoomSettings,
  baseEnv: NodeJS.ProcessEnv,
  log: (line: string) => void,
): Promise<PhaseResult> {
  const child = forkIpc<HotRoomsRuntimeApi>('bench/hot-rooms-runtime.ts', `hot-rooms ${kind} runtime`, 10_000, baseEnv);
  const receivers: Receiver[] = [];
  try {
    const { baseUrl, settings } = await child.call('start', {
      CHAT_OPERATOR_KEY: BENCH_OPERATOR_KEY,
      RATE_LIMIT_MESSAGES_PER_MINUTE: '100000000',
      // The quiet room: the same room and rate with the heat out of reach.
      ...(kind === 'quiet' ? { REALTIME_COALESCE_THRESHOLD_PER_SECOND: '100000' } : {}),
    });
    const api = new Api(baseUrl);
    const project = await createProject(api, `bench hot room ${kind}`);
    const senderToken = await project.token('sender');
    const roomId = uniqueId('hot');
    await api.expect(201, '/rooms', { token: senderToken, body: { id: roomId, type: 'group', members: [] } });
    const users = [
      ...Array.from({ length: hot.receivers }, (_, i) => ({ userId: `batch-${i}`, batch: true })),
      ...Array.from({ length: hot.singles }, (_, i) => ({ userId: `single-${i}`, batch: false })),
    ];
    await inBatches(users, async ({ userId }) => {
      const added = await api.request(`/rooms/${roomId}/members`, { token: senderToken, body: { userId, role: 'member' } });
      if (added.status >= 300) throw new Error(`adding ${userId}: ${added.status} ${JSON.stringify(added.body)}`);
    });
    const tokens = new Map<string, string>();
    await inBatches(users, async ({ userId }) => tokens.set(userId, await project.token(userId)));

    // The heat: a burst past the threshold, counted by the event publisher off the stream.
    const burstStarted = Date.now();
    await Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        api.expect(201, '/messages', { token: senderToken, body: { roomId, content: `burst-${i}` } }),
      ),
    );
    let markedBy: PhaseResult['markedBy'] = 'none';
    let heatMs: number | null = null;
    if (kind === 'coalesced') {
      while (Date.now() - burstStarted < HEAT_WAIT_MS) {
        const until = await child.call('coalesceUntil', project.projectId, roomId);
        if (until !== null && until > Date.now()) {
          markedBy = 'heat';
          heatMs = Date.now() - burstStarted;
          break;
        }
        await sleep(25);
      }
      if (markedBy === 'none') {
        await child.call('markCoalesced', project.projectId, roomId, Date.now() + settings.holdSeconds * 1000);
        markedBy = 'hand';
      }
      log(`   ${kind}: room marked by ${markedBy}${heatMs === null ? '' : ` ${heatMs} ms after the burst began`}`);
    }
    const markedAt = Date.now();

    // Receivers connect after the burst (history=0: they never see it).
    const sentAt = new Map<number, number>();
    let measuring = false;
    const wsBase = baseUrl.replace(/^http/, 'ws');
    for (const { userId, batch } of users) {
      const receiver: Receiver = {
        socket: new WebSocket(`${wsBase}/ws/rooms/${roomId}?token=${tokens.get(userId)}&history=0${batch ? '&batch=1' : ''}`),
        batch,
        ids: [],
        indexes: new Set(),
        duplicates: 0,
        frames: 0,
        batchFrames: 0,
        messagesInBatches: 0,
        other: 0,
        latencies: [],
      };
      receiver.socket.on('message', (data) => {
        const now = performance.now();
        if (!measuring) return;
        const frame = JSON.parse(String(data));
        if (frame.type !== 'batch' && frame.type !== 'message') {
          receiver.other++;
          return;
        }
        const inner: { type: string; message: { id: number; content: string } }[] = frame.type === 'batch' ? frame.frames : [frame];
        receiver.frames++;
        if (frame.type === 'batch') {
          receiver.batchFrames++;
          receiver.messagesInBatches += inner.length;
        }
        for (const entry of inner) {
          const index = entry.type === 'message' ? Number(/^hot-(\d+)$/.exec(entry.message.content)?.[1] ?? Number.NaN) : Number.NaN;
          if (!Number.isInteger(index)) continue;
          if (receiver.indexes.has(index)) {
            receiver.duplicates++;
            continue;
          }
          receiver.indexes.add(index);
          receiver.ids.push(entry.message.id);
          const started = sentAt.get(index);
          if (started !== undefined) receiver.latencies.push(now - started);
        }
      });
      receivers.push(receiver);
    }
    await Promise.all(
      receivers.map(
        (r) =>
          new Promise((resolve, reject) => {
            r.socket.once('open', resolve).once('error', reject);
          }),
      ),
    );
    // The sender's room cache (CACHE_TTL_MS) must see `coalesceUntil`, and the connections settle.
    await sleep(Math.max(0, markedAt + settings.cacheTtlMs + 1000 - Date.now()));

    const total = hot.rate * hot.seconds;
    const postsBefore = await child.call('posts');
    measuring = true;
    let senderErrors = 0;
    const begun = performance.now();
    const sends: Promise<void>[] = [];
    for (let i = 0; i < total; i++) {
      const due = begun + (i * 1000) / hot.rate;
      await sleep(Math.max(0, due - performance.now()));
      sentAt.set(i, performance.now());
      sends.push(
        api.request('/messages', { token: senderToken, body: { roomId, content: `hot-${i}` } }).then(
          (answer) => {
            if (answer.status !== 201) senderErrors++;
          },
          () => {
            senderErrors++;
          },
        ),
      );
    }
    await Promise.all(sends);
    const sendMs = performance.now() - begun;
    const expected = (total - senderErrors) * receivers.length;
    const deadline = performance.now() + DRAIN_MS;
    const delivered = () => receivers.reduce((all, r) => all + r.indexes.size, 0);
    while (delivered() < expected && performance.now() < deadline) await sleep(50);
    // A last window's frames, and anything duplicated after the count was reached.
    await sleep(settings.windowMs + 300);
    measuring = false;
    const posts = (await child.call('posts')) - postsBefore;
    const result: PhaseResult = {
      kind,
      settings,
      markedBy,
      heatMs,
      sent: total,
      senderErrors,
      sendMs: round(sendMs, 0),
      batch: summarize(
        receivers.filter((r) => r.batch),
        total,
      ),
      singles: summarize(
        receivers.filter((r) => !r.batch),
        total,
      ),
      otherFrames: receivers.reduce((all, r) => all + r.other, 0),
      postsPerMessage: round(posts / total, 2),
      loadAverage: loadAverage(),
    };
    log(
      `   ${kind}: ${result.batch.delivered}/${result.batch.expected} to batch=1 receivers, p50 ${result.batch.latencyMs.p50} ms, p99 ${result.batch.latencyMs.p99} ms, ${result.batch.framesPerMessage} frames per message; singles ${result.singles.delivered}/${result.singles.expected}, ${result.singles.framesPerMessage} frames per message; ${result.postsPerMessage} posts per message; load ${result.loadAverage}`,
    );
    return result;
  } finally {
    // Closed, and their `$disconnect` runs waited for, before the runtime (and its DynamoDB Local) stops.
    const closed = receivers.map((r) => new Promise((resolve) => r.socket.once('close', resolve)));
    for (const r of receivers) r.socket.close();
    await Promise.race([Promise.all(closed), sleep(5000)]);
    for (const r of receivers) r.socket.terminate();
    await sleep(CLOSE_SETTLE_MS);
    await child.stop();
  }
}

const deliveryOk = (group: GroupResult) => group.delivered === group.expected && group.duplicates === 0 && group.outOfOrderReceivers === 0;

const deliveryText = (group: GroupResult) =>
  `${group.delivered}/${group.expected} delivered, ${group.duplicates} duplicated, ${group.outOfOrderReceivers} receivers out of order`;

export const hotRooms: Bench<HotRoomsResult> = {
  id: 'hotRooms',
  name: 'Hot rooms',
  // Its runtimes are its own (child processes): it runs once the harness's runtime has stopped, so that one's DynamoDB Local is not on the machine.
  needs: 'machine',
  async run({ settings, baseEnv, log }) {
    const hot = settings.hotRoom;
    const coalescedRun = await phase('coalesced', hot, baseEnv, log);
    const quiet = await phase('quiet', hot, baseEnv, log);
    const millions = (group: GroupResult) => round(group.framesPerMessage * hot.receivers, 1);
    return {
      settings: hot,
      coalescedRun,
      quiet,
      coalesced: { framesPerMessage: coalescedRun.batch.framesPerMessage, rate: hot.rate, receivers: hot.receivers },
      apiGatewayMillions: { coalesced: millions(coalescedRun.batch), quiet: millions(quiet.batch) },
      quietReference: quietReference(),
    };
  },

  goals(result) {
    const { coalescedRun: c, quiet: q, settings: s } = result;
    const room = `room of ${s.receivers} at ${s.rate} msg/s`;
    return [
      {
        id: 'hotRooms.apiGateway',
        name: `API Gateway messages per million room messages, ${room}, coalesced`,
        target: `≤ ${GOAL_MILLIONS} M (uncoalesced: ${UNCOALESCED_MILLIONS} M)`,
        measured: `${fmt(result.apiGatewayMillions.coalesced)} M (${fmt(c.batch.framesPerMessage, 3)} frames per message per receiver; the quiet room ${fmt(result.apiGatewayMillions.quiet)} M)`,
        pass: result.apiGatewayMillions.coalesced <= GOAL_MILLIONS,
      },
      {
        id: 'hotRooms.coalescedP99',
        name: 'send → receive p99 in a coalesced room (local)',
        target: `≤ ${GOAL_COALESCED_P99_MS} ms`,
        measured: `${fmt(c.batch.latencyMs.p99)} ms (p50 ${fmt(c.batch.latencyMs.p50)} ms, ${room})`,
        pass: c.batch.latencyMs.p99 <= GOAL_COALESCED_P99_MS,
      },
      {
        id: 'hotRooms.quietP99',
        name: 'send → receive p99 in a quiet room',
        target: `no worse than the last report (${fmt(result.quietReference.p99Ms)} ms)`,
        measured: `${fmt(q.batch.latencyMs.p99)} ms (p50 ${fmt(q.batch.latencyMs.p50)} ms, ${room}, threshold out of reach)`,
        pass: q.batch.latencyMs.p99 <= result.quietReference.p99Ms,
      },
      {
        id: 'hotRooms.delivery',
        name: 'Every message to every receiver of the hot room once, in order; receivers without `batch=1` get single frames',
        target: 'all, none duplicated, in order; no batch frame without `batch=1`',
        measured: `batch=1: ${deliveryText(c.batch)}; without: ${deliveryText(c.singles)}, ${c.singles.batchFrames} batch frames`,
        pass: deliveryOk(c.batch) && deliveryOk(c.singles) && c.singles.batchFrames === 0 && c.singles.frames === c.singles.delivered,
      },
    ];
  },

  section(result, run: Run) {
    const { coalescedRun: c, quiet: q, settings: s } = result;
    const goals = hotRooms.goals(result, run);
    const row = (label: string, p: PhaseResult, group: GroupResult) => [
      label,
      group.sockets,
      `${p.sent - p.senderErrors} / ${group.expected}`,
      `${group.delivered} (${group.duplicates} duplicated, ${group.outOfOrderReceivers} out of order)`,
      fmt(group.latencyMs.p50),
      fmt(group.latencyMs.p99),
      fmt(group.latencyMs.max),
      fmt(group.framesPerMessage, 3),
      group.messagesPerBatch === null ? '—' : `${group.batchFrames} (${fmt(group.messagesPerBatch, 2)} messages each)`,
    ];
    const marked =
      c.markedBy === 'heat'
        ? `The room turned hot by the service's own heat: a burst of ${BURST} messages sent at once (past the threshold of ${c.settings.thresholdPerSecond} a second) made the event publisher set the room's \`coalesceUntil\` ${fmt(c.heatMs, 0)} ms after the burst began`
        : `The burst of ${BURST} messages did not make the room hot within ${HEAT_WAIT_MS / 1000} s, so the bench **marked it by hand** (\`setRoomCoalesceUntil\`, a hold of ${c.settings.holdSeconds} s)`;
    const extra = s.singles;
    return [
      '## Hot rooms: coalesced delivery',
      '',
      `A busy room's deliveries are coalesced (docs/architecture.md, "Hot rooms: coalesced delivery"): past \`REALTIME_COALESCE_THRESHOLD_PER_SECOND\` (${c.settings.thresholdPerSecond}) messages a second the room's senders stop broadcasting, and the \`RoomDelivery\` stream consumer posts each window's messages (\`REALTIME_COALESCE_WINDOW_MS\`, ${c.settings.windowMs} ms locally) as one \`{"type":"batch","frames":[…]}\` frame to each socket that connected with \`batch=1\`, and as single frames to the rest. API Gateway bills a WebSocket message per frame (up to 32 KB), so frames per message per receiver is the cost.`,
      '',
      `Setup: one room of ${s.receivers} receivers with \`batch=1\` and ${extra} without, each its own user and socket, and a sender posting \`POST /messages\` (HTTP) at ${s.rate} messages a second for ${s.seconds} s (${c.sent} messages), on a local runtime of its own in a child process (\`bench/hot-rooms-runtime.ts\`: the handlers read the coalescing settings once per process). The receivers and the sender run in the bench process, so send → receive is from the send's start to the frame's arrival, on one clock. ${marked}; the receivers connected after the burst (\`history=0\`), and the measurement began once the sender's room cache (\`CACHE_TTL_MS\`, ${c.settings.cacheTtlMs} ms) had run out, so every measured message took the coalesced path. The **quiet** room is the same room size, rate and steps on a second runtime with the threshold out of reach (100,000 a second): each message broadcast at once by its sender. Late frames were waited for up to ${DRAIN_MS / 1000} s after the last send's answer. Load average ${fmt(c.loadAverage, 2)} after the coalesced run, ${fmt(q.loadAverage, 2)} after the quiet one (1 minute).`,
      '',
      goalTable(goals),
      '',
      table(
        'Room | Receivers | Sent / expected deliveries | Delivered | p50 ms | p99 ms | max ms | Frames per message per receiver | Batch frames',
        [
          row('coalesced, `batch=1`', c, c.batch),
          row('coalesced, without `batch=1`', c, c.singles),
          row('quiet, `batch=1`', q, q.batch),
          row('quiet, without `batch=1`', q, q.singles),
        ],
      ),
      '',
      `API Gateway messages per million room messages, for the ${s.receivers} opted-in receivers: ${fmt(result.apiGatewayMillions.coalesced)} M coalesced against ${fmt(result.apiGatewayMillions.quiet)} M quiet (frames per message per receiver × ${s.receivers} × 1e6). Each member without \`batch=1\` adds 1 M (one frame per message either way). The runtime's gateway counted ${c.postsPerMessage} \`@connections\` posts per message in the coalesced room and ${q.postsPerMessage} in the quiet one, for all ${s.receivers + extra} sockets. The sender here is HTTP, which posts no WebSocket frame (its request is an HTTP API request, billed apart); a sender on a WebSocket would add its inbound frame and its \`ack\`, 2 API Gateway messages per room message (+2 M per million), coalesced or not. Sender errors: ${c.senderErrors} coalesced, ${q.senderErrors} quiet; frames of other types during the measurement: ${c.otherFrames} and ${q.otherFrames}.`,
      '',
      `The quiet room's reference p99, ${fmt(result.quietReference.p99Ms)} ms (the realtime bench's persisted messages at 10 a second; this room's come at ${s.rate}), comes from ${result.quietReference.source}. The cost model of "Realtime fan-out" reads \`hotRooms.coalesced.framesPerMessage\` from \`bench/results/latest.json\` (${fmt(result.coalesced.framesPerMessage, 3)} here).`,
    ].join('\n');
  },
};
