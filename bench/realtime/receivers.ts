/**
 * Receivers child process of the realtime bench, started by bench/realtime/index.ts with
 * `node --import tsx`, one per server under test. It holds the sender socket and every receiver
 * socket, so the clients' CPU (framing, JSON, timing) stays out of the process of the server under
 * test. The sender stamps each frame with its send time (`performance.timeOrigin + now()`); each
 * receiver takes its receipt time on the same clock. Results go back over the IPC channel.
 */
import { performance } from 'node:perf_hooks';
import Pusher, { type Channel } from 'pusher-js';
import { WebSocket } from 'ws';
import {
  CLIENT_EVENT,
  type ClientEventData,
  type FromReceivers,
  messageContent,
  nowMs,
  PAYLOAD_TEXT,
  parseClientData,
  parseMessageContent,
  type RunResult,
  type RunSpec,
  type TargetConfig,
  type ToReceivers,
  type Workload,
} from './protocol';
import { signChannel } from './soketi';

const reply = (message: FromReceivers) => process.send?.(message);

/** One server under test as the clients see it. */
interface Leg {
  openSender(): Promise<void>;
  /** Opens receiver `index`, replacing (and closing) any socket it already has. */
  openReceiver(index: number): Promise<void>;
  send(workload: Workload, run: number, seq: number): void;
  /** Every receiver and the sender, as closers to call. */
  closers(): (() => void)[];
}

/**
 * Closes everything in batches of 50 every 20 ms, not all at once: how the bench leaves should not
 * turn into a disconnect storm that the next figure (or the server's shutdown) trips over.
 */
async function closeGently(target: Leg | undefined): Promise<void> {
  const closers = target?.closers() ?? [];
  for (let start = 0; start < closers.length; start += 50) {
    for (const close of closers.slice(start, start + 50)) close();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The window being measured; deliveries of any other run are strays. */
interface Current {
  readonly id: number;
  readonly receivers: number;
  readonly capacity: number;
  readonly seen: Uint8Array[];
  readonly latencies: number[];
  sent: number;
  delivered: number;
  duplicates: number;
  acks: number;
  readonly senderErrors: Record<string, number>;
  firstSendAt: number;
  lastSendAt: number;
  lastDeliveryAt: number;
  /** Called after every delivery and ack, to end a drain early. */
  progress?: () => void;
}

let leg: Leg | undefined;
let receiverCount = 0;
let senderOpen = false;
let current: Current | undefined;
let lastFrameAt = 0;
let framesSeen = 0;
/** Deliveries of a window that was already over (or of none) when they came. */
let strays = 0;

function frameArrived(): void {
  lastFrameAt = performance.now();
  framesSeen++;
}

function deliver(receiver: number, run: number, seq: number, sentAt: number): void {
  const at = nowMs();
  const open = current;
  if (!open || run !== open.id) {
    strays++;
    return;
  }
  const seen = open.seen[receiver];
  if (!seen || seq >= open.capacity) return;
  if (seen[seq]) {
    open.duplicates++;
    return;
  }
  seen[seq] = 1;
  open.delivered++;
  open.latencies.push(at - sentAt);
  open.lastDeliveryAt = performance.now();
  open.progress?.();
}

function senderFrame(frame: { type?: unknown; error?: { code?: unknown } }): void {
  const open = current;
  if (!open) return;
  if (frame.type === 'ack') {
    open.acks++;
    open.progress?.();
  } else if (frame.type === 'error') {
    const code = typeof frame.error?.code === 'string' ? frame.error.code : 'unknown';
    open.senderErrors[code] = (open.senderErrors[code] ?? 0) + 1;
  }
}

const clientData = (run: number, seq: number): ClientEventData => ({ run, seq, sentAt: nowMs(), text: PAYLOAD_TEXT });

/** Opens a `ws` socket; `ready` decides from the first frames when it counts as connected. */
function openSocket(
  url: string,
  timeoutMs: number,
  onFrame: (frame: any) => void,
  ready: ((frame: any) => boolean) | 'open',
): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { perMessageDeflate: false });
    let settled = false;
    const settle = (error?: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) {
        socket.terminate();
        reject(error);
      } else resolve(socket);
    };
    const timer = setTimeout(
      () => settle(new Error(`${ready === 'open' ? 'not open' : 'no connected frame'} within ${timeoutMs} ms (${redact(url)})`)),
      timeoutMs,
    );
    socket.on('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      response.on('end', () => settle(new Error(`handshake refused: HTTP ${response.statusCode} ${body.slice(0, 300)} (${redact(url)})`)));
    });
    socket.on('error', (error) => settle(new Error(`${error.message} (${redact(url)})`)));
    socket.on('close', (code, reason) => settle(new Error(`closed before ready: ${code} ${reason.toString()} (${redact(url)})`)));
    if (ready === 'open') socket.on('open', () => settle());
    socket.on('message', (data) => {
      frameArrived();
      let frame: any;
      try {
        frame = JSON.parse(data.toString());
      } catch {
        return;
      }
      if (!settled && ready !== 'open' && ready(frame)) settle();
      onFrame(frame);
    });
  });
}

const redact = (url: string) => url.replace(/token=[^&]+/, 'token=…');

function plainLeg(target: Extract<TargetConfig, { kind: 'plain' }>, timeoutMs: () => number): Leg {
  const sockets = new Map<number, WebSocket>();
  let sender: WebSocket | undefined;
  return {
    async openSender() {
      sender = await openSocket(target.url, timeoutMs(), () => undefined, 'open');
    },
    async openReceiver(index) {
      const onFrame = (frame: { data?: unknown }) => {
        const data = parseClientData(frame.data);
        if (data) deliver(index, data.run, data.seq, data.sentAt);
      };
      sockets.get(index)?.terminate();
      sockets.set(index, await openSocket(target.url, timeoutMs(), onFrame, 'open'));
    },
    send(_workload, run, seq) {
      sender?.send(JSON.stringify({ type: CLIENT_EVENT, data: clientData(run, seq) }));
    },
    closers() {
      return [...sockets.values(), sender].flatMap((socket) => (socket ? [() => socket.close()] : []));
    },
  };
}

function soketiLeg(target: Extract<TargetConfig, { kind: 'soketi' }>, timeoutMs: () => number): Leg {
  const clients = new Map<number | 'sender', Pusher>();
  let senderChannel: Channel | undefined;
  const open = (index: number | 'sender', onEvent?: (data: unknown) => void): Promise<Channel> =>
    new Promise((resolve, reject) => {
      const pusher = new Pusher(target.appKey, {
        cluster: 'local',
        wsHost: target.host,
        wsPort: target.port,
        forceTLS: false,
        enabledTransports: ['ws'],
        disableStats: true,
        channelAuthorization: {
          customHandler: ({ socketId, channelName }, callback) =>
            callback(null, { auth: signChannel(target.appKey, target.appSecret, socketId, channelName) }),
        },
      });
      clients.get(index)?.disconnect();
      clients.set(index, pusher);
      const timer = setTimeout(() => reject(new Error(`no subscription within ${timeoutMs()} ms`)), timeoutMs());
      const channel = pusher.subscribe(target.channel);
      channel.bind_global(() => frameArrived());
      channel.bind('pusher:subscription_succeeded', () => {
        clearTimeout(timer);
        resolve(channel);
      });
      channel.bind('pusher:subscription_error', (error: unknown) => {
        clearTimeout(timer);
        reject(new Error(`subscription refused: ${JSON.stringify(error)}`));
      });
      pusher.connection.bind('error', (error: unknown) => {
        clearTimeout(timer);
        reject(new Error(`connection error: ${JSON.stringify(error)}`));
      });
      if (onEvent) channel.bind(CLIENT_EVENT, onEvent);
    });
  return {
    async openSender() {
      senderChannel = await open('sender');
    },
    async openReceiver(index) {
      await open(index, (raw) => {
        const data = parseClientData(raw);
        if (data) deliver(index, data.run, data.seq, data.sentAt);
      });
    },
    send(_workload, run, seq) {
      senderChannel?.trigger(CLIENT_EVENT, clientData(run, seq));
    },
    closers() {
      return [...clients.values()].map((client) => () => client.disconnect());
    },
  };
}

function serviceLeg(target: Extract<TargetConfig, { kind: 'service' }>, timeoutMs: () => number): Leg {
  const sockets = new Map<number, WebSocket>();
  let sender: WebSocket | undefined;
  const url = (token: string) => `${target.wsBase}/ws/rooms/${encodeURIComponent(target.roomId)}?token=${token}&history=0`;
  const isConnected = (frame: { type?: unknown }) => frame.type === 'connected';
  return {
    async openSender() {
      sender = await openSocket(url(target.senderToken), timeoutMs(), senderFrame, isConnected);
    },
    async openReceiver(index) {
      const token = target.receiverTokens[index];
      if (!token) throw new Error(`no token for receiver ${index}: the bench made ${target.receiverTokens.length}`);
      const onFrame = (frame: { type?: unknown; message?: { content?: unknown }; event?: unknown; data?: unknown }) => {
        if (frame.type === 'message') {
          const stamp = parseMessageContent(frame.message?.content);
          if (stamp) deliver(index, stamp.run, stamp.seq, stamp.sentAt);
        } else if (frame.type === 'event' && frame.event === CLIENT_EVENT) {
          const data = parseClientData(frame.data);
          if (data) deliver(index, data.run, data.seq, data.sentAt);
        }
      };
      sockets.get(index)?.terminate();
      sockets.set(index, await openSocket(url(token), timeoutMs(), onFrame, isConnected));
    },
    send(workload, run, seq) {
      if (workload === 'message') sender?.send(JSON.stringify({ type: 'message', content: messageContent(run, seq, nowMs()) }));
      else sender?.send(JSON.stringify({ type: CLIENT_EVENT, data: clientData(run, seq) }));
    },
    closers() {
      return [...sockets.values(), sender].flatMap((socket) => (socket ? [() => socket.close()] : []));
    },
  };
}

let connectTimeoutMs = 30_000;

function configure(target: TargetConfig): void {
  const timeout = () => connectTimeoutMs;
  leg =
    target.kind === 'plain'
      ? plainLeg(target, timeout)
      : target.kind === 'soketi'
        ? soketiLeg(target, timeout)
        : serviceLeg(target, timeout);
}

/** Opens receivers `indexes` with at most `concurrency` handshakes in flight; the first failure rejects. */
async function openAll(indexes: readonly number[], concurrency: number): Promise<void> {
  if (!leg) throw new Error('receivers: not configured');
  const active = leg;
  let next = 0;
  let failed = false;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(concurrency, indexes.length)) }, async () => {
      while (next < indexes.length && !failed) {
        const index = indexes[next++] as number;
        try {
          await active.openReceiver(index);
        } catch (error) {
          failed = true;
          throw error;
        }
      }
    }),
  );
}

async function connect(receivers: number, concurrency: number): Promise<number> {
  if (!leg) throw new Error('receivers: not configured');
  const started = performance.now();
  if (!senderOpen) {
    await leg.openSender();
    senderOpen = true;
  }
  const fresh = Array.from({ length: Math.max(0, receivers - receiverCount) }, (_, i) => receiverCount + i);
  await openAll(fresh, concurrency);
  receiverCount = Math.max(receiverCount, receivers);
  return performance.now() - started;
}

/**
 * Sends one client event and reopens every receiver it did not reach, up to `rounds` times: a
 * receiver the server forgot at connect would otherwise starve every window after it.
 */
async function verify(timeoutMs: number, rounds: number, concurrency: number): Promise<{ missing: number[]; stillMissing: number }> {
  const missing: number[] = [];
  for (let round = 0; ; round++) {
    const { state } = await measureWindow(verifyId--, 'client', 1000, 1, timeoutMs, false);
    const lost = state.seen.flatMap((seen, index) => (seen[0] ? [] : [index]));
    if (lost.length === 0) return { missing, stillMissing: 0 };
    if (round >= rounds) return { missing, stillMissing: lost.length };
    missing.push(lost.length);
    await openAll(lost, concurrency);
    await quiet(300, 10_000);
  }
}

/** Run ids of verification frames: negative, so they never collide with the bench's windows. */
let verifyId = -1;

async function quiet(quietMs: number, maxMs: number): Promise<{ ms: number; quiet: boolean; frames: number }> {
  const started = performance.now();
  const framesBefore = framesSeen;
  for (;;) {
    const now = performance.now();
    if (now - lastFrameAt >= quietMs) return { ms: now - started, quiet: true, frames: framesSeen - framesBefore };
    if (now - started >= maxMs) return { ms: now - started, quiet: false, frames: framesSeen - framesBefore };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function percentileOf(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

/** Sends `count` frames at `rate` per second (open loop), then waits for what is missing up to `drainMs`. */
async function measureWindow(
  id: number,
  workload: Workload,
  rate: number,
  count: number,
  drainMs: number,
  needAcks: boolean,
): Promise<{ result: RunResult; state: Current }> {
  if (!leg) throw new Error('receivers: not configured');
  const active = leg;
  const state: Current = {
    id,
    receivers: receiverCount,
    capacity: count,
    seen: Array.from({ length: receiverCount }, () => new Uint8Array(count)),
    latencies: [],
    sent: 0,
    delivered: 0,
    duplicates: 0,
    acks: 0,
    senderErrors: {},
    firstSendAt: 0,
    lastSendAt: 0,
    lastDeliveryAt: 0,
  };
  current = state;
  const straysBefore = strays;
  const cpuBefore = process.cpuUsage();
  const eluBefore = performance.eventLoopUtilization();
  const interval = 1000 / rate;
  const started = performance.now();
  state.firstSendAt = started;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const elapsed = performance.now() - started;
      const due = Math.min(count, Math.floor(elapsed / interval) + 1);
      while (state.sent < due) active.send(workload, id, state.sent++);
      if (state.sent >= count) {
        resolve();
        return;
      }
      setTimeout(tick, Math.max(0, state.sent * interval - elapsed));
    };
    tick();
  });
  state.lastSendAt = performance.now();
  const expected = state.sent * state.receivers;
  const done = () => state.delivered >= expected && (!needAcks || state.acks >= state.sent);
  if (!done()) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(finish, drainMs);
      function finish() {
        clearTimeout(timer);
        state.progress = undefined;
        resolve();
      }
      state.progress = () => {
        if (done()) finish();
      };
    });
  }
  const endedAt = performance.now();
  const cpu = process.cpuUsage(cpuBefore);
  const elu = performance.eventLoopUtilization(eluBefore);
  // Frames of this window that come later count as strays.
  current = undefined;
  const sorted = Float64Array.from(state.latencies).sort();
  const complete = state.delivered >= expected;
  const result: RunResult = {
    sent: state.sent,
    receivers: state.receivers,
    expected,
    delivered: state.delivered,
    duplicates: state.duplicates,
    strays: strays - straysBefore,
    acks: state.acks,
    senderErrors: state.senderErrors,
    latencyMs: {
      p50: percentileOf(sorted, 50),
      p99: percentileOf(sorted, 99),
      max: sorted.length ? (sorted[sorted.length - 1] as number) : Number.NaN,
      mean: sorted.length ? sorted.reduce((total, value) => total + value, 0) / sorted.length : Number.NaN,
    },
    sendMs: state.lastSendAt - state.firstSendAt,
    spanMs: (complete ? state.lastDeliveryAt : endedAt) - state.firstSendAt,
    complete,
    cpuMs: (cpu.user + cpu.system) / 1000,
    eventLoopUtilization: elu.utilization,
  };
  return { result, state };
}

async function run(spec: RunSpec): Promise<RunResult> {
  const count = Math.max(1, Math.round((spec.rate * spec.durationMs) / 1000));
  return (await measureWindow(spec.id, spec.workload, spec.rate, count, spec.drainMs, false)).result;
}

async function handle(message: ToReceivers): Promise<void> {
  switch (message.type) {
    case 'configure':
      configure(message.target);
      reply({ type: 'configured' });
      return;
    case 'connect': {
      connectTimeoutMs = message.timeoutMs;
      const ms = await connect(message.receivers, message.concurrency);
      reply({ type: 'connected', receivers: receiverCount, ms });
      return;
    }
    case 'quiet':
      reply({ type: 'quiet', ...(await quiet(message.quietMs, message.maxMs)) });
      return;
    case 'verify':
      reply({ type: 'verified', ...(await verify(message.timeoutMs, message.rounds, message.concurrency)) });
      return;
    case 'run':
      reply({ type: 'ran', result: await run(message.run) });
      return;
    case 'probe': {
      const started = performance.now();
      const { result } = await measureWindow(message.id, message.workload, 1000, 1, message.timeoutMs, message.workload === 'message');
      reply({ type: 'probed', result: { delivered: result.delivered, expected: result.expected, ms: performance.now() - started } });
      return;
    }
    case 'exit':
      await closeGently(leg);
      // Let the close handshakes go out before the process ends.
      await new Promise((resolve) => setTimeout(resolve, 200));
      process.disconnect?.();
      return;
  }
}

process.on('message', (message: ToReceivers) => {
  handle(message).catch((error: unknown) => reply({ type: 'failed', error: error instanceof Error ? error.message : String(error) }));
});
// The bench process is gone (finished, or killed): nothing is left to measure for.
process.on('disconnect', () => {
  for (const close of leg?.closers() ?? []) close();
  process.exit(0);
});
