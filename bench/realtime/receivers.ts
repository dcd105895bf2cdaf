/**
 * Receivers child process of the realtime bench, forked once per server under test. It holds the
 * sender socket and every receiver socket, so the clients' CPU (framing, JSON, timing) stays out of
 * the process of the server under test. The sender stamps each frame with its send time
 * (`performance.timeOrigin + now()`, one clock for the whole machine); each receiver takes its
 * receipt time on the same clock. The protocol with the bench process is the types below.
 */
import { performance } from 'node:perf_hooks';
import Pusher, { type Channel } from 'pusher-js';
import { WebSocket } from 'ws';
import { MESSAGE_CONTENT, serveIpc, sum } from '../util';
import { signChannel } from './servers';

/**
 * `plain`: the `ws` broadcast server; `soketi`: Soketi through pusher-js; `service`: the local
 * runtime over its native protocol; `pusher`: the local runtime over the Pusher protocol (pusher-js).
 */
export type TargetKind = 'plain' | 'soketi' | 'service' | 'pusher';

/** `message`: a persisted chat message (service only); `client`: a `client-bench` event. */
export type Workload = 'message' | 'client';

/** How the child reaches the server under test. */
export type TargetConfig =
  /** `url` names the room: `ws://127.0.0.1:<port>/rooms/<roomId>`. */
  | { readonly kind: 'plain'; readonly url: string }
  /** A private channel (Pusher relays client events on private and presence channels only); the child signs its authorizations. */
  | {
      readonly kind: 'soketi';
      readonly host: string;
      readonly port: number;
      readonly appKey: string;
      readonly appSecret: string;
      readonly channel: string;
    }
  /**
   * The local runtime's `/app/<key>`: every client subscribes to `channel` (`private-room-<roomId>`)
   * with the auth `POST /auth/channel` answers its user (`authUrl`, one token per receiver). A
   * persisted message has no Pusher frame to send it, so the sender posts messages on a native
   * socket of the room (`messageSenderUrl`, token included) and receivers get them as `message`.
   */
  | {
      readonly kind: 'pusher';
      readonly host: string;
      readonly port: number;
      readonly appKey: string;
      readonly channel: string;
      readonly authUrl: string;
      readonly senderToken: string;
      readonly receiverTokens: readonly string[];
      readonly messageSenderUrl: string;
    }
  /** `wsBase`: `ws://127.0.0.1:<port>` of the local gateway; one token per receiver, each its own user. */
  | {
      readonly kind: 'service';
      readonly wsBase: string;
      readonly roomId: string;
      readonly senderToken: string;
      readonly receiverTokens: readonly string[];
    };

/** What the child saw of one window. Times are ms on the child's clock. */
export type RunResult = Awaited<ReturnType<typeof measureWindow>>['result'];

const CLIENT_EVENT = 'client-bench';
/** Epoch milliseconds with sub-millisecond precision, comparable across processes on this machine. */
const nowMs = () => performance.timeOrigin + performance.now();
/** A persisted message carries its stamp at the start of its content (no `@`, so no mention); every frame carries the same 120-character line. */
const messageContent = (run: number, seq: number, sentAt: number) => `rt:${run}:${seq}:${sentAt.toFixed(3)} ${MESSAGE_CONTENT}`;
const clientData = (run: number, seq: number) => ({ run, seq, sentAt: nowMs(), text: MESSAGE_CONTENT });

/** The stamp of a frame's payload: a client event's `data`, or a message's content. */
function stamp(data: unknown): { run: number; seq: number; sentAt: number } | undefined {
  if (typeof data === 'string') {
    const match = /^rt:(\d+):(\d+):(\d+(?:\.\d+)?) /.exec(data);
    return match ? { run: Number(match[1]), seq: Number(match[2]), sentAt: Number(match[3]) } : undefined;
  }
  const { run, seq, sentAt } = (data ?? {}) as Record<string, unknown>;
  return typeof run === 'number' && typeof seq === 'number' && typeof sentAt === 'number' ? { run, seq, sentAt } : undefined;
}

/** One server under test as the clients see it. */
interface Leg {
  openSender(): Promise<void>;
  /** Opens receiver `index`, replacing (and closing) any socket it already has. */
  openReceiver(index: number): Promise<void>;
  send(workload: Workload, run: number, seq: number): void;
  /** Every receiver and the sender, as closers to call. */
  closers(): (() => void)[];
}

/** The window being measured; deliveries of any other run are strays. */
interface Window {
  readonly id: number;
  readonly capacity: number;
  readonly seen: Uint8Array[];
  readonly latencies: number[];
  readonly senderErrors: Record<string, number>;
  sent: number;
  delivered: number;
  duplicates: number;
  acks: number;
  lastDeliveryAt: number;
  /** Called after every delivery and ack (and when the drain's time is up), to end a drain early. */
  progress?: (timeUp?: boolean) => void;
}

let leg: Leg | undefined;
let receiverCount = 0;
let senderOpen = false;
let current: Window | undefined;
let lastFrameAt = 0;
let framesSeen = 0;
let connectTimeoutMs = 30_000;

function deliver(receiver: number, data: unknown): void {
  const at = nowMs();
  const s = stamp(data);
  if (!s) return;
  const open = current;
  if (!open || s.run !== open.id) return;
  const seen = open.seen[receiver];
  if (!seen || s.seq >= open.capacity) return;
  if (seen[s.seq]) {
    open.duplicates++;
    return;
  }
  seen[s.seq] = 1;
  open.delivered++;
  open.latencies.push(at - s.sentAt);
  open.lastDeliveryAt = performance.now();
  open.progress?.();
}

function senderFrame(frame: { type?: unknown; error?: { code?: unknown } }): void {
  if (!current) return;
  if (frame.type === 'ack') {
    current.acks++;
    current.progress?.();
  } else if (frame.type === 'error') {
    const code = typeof frame.error?.code === 'string' ? frame.error.code : 'unknown';
    current.senderErrors[code] = (current.senderErrors[code] ?? 0) + 1;
  }
}

const redact = (url: string) => url.replace(/token=[^&]+/, 'token=…');

/** Opens a `ws` socket; `ready` decides from the first frames when it counts as connected ('open': on open). */
function openSocket(url: string, onFrame: (frame: any) => void, ready: ((frame: any) => boolean) | 'open'): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { perMessageDeflate: false });
    let settled = false;
    const settle = (error?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) {
        socket.terminate();
        reject(new Error(`${error} (${redact(url)})`));
      } else resolve(socket);
    };
    const timer = setTimeout(
      () => settle(`${ready === 'open' ? 'not open' : 'no connected frame'} within ${connectTimeoutMs} ms`),
      connectTimeoutMs,
    );
    socket.on('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      response.on('end', () => settle(`handshake refused: HTTP ${response.statusCode} ${body.slice(0, 300)}`));
    });
    socket.on('error', (error) => settle(error.message));
    socket.on('close', (code, reason) => settle(`closed before ready: ${code} ${reason.toString()}`));
    if (ready === 'open') socket.on('open', () => settle());
    socket.on('message', (data) => {
      lastFrameAt = performance.now();
      framesSeen++;
      let frame: any;
      try {
        frame = JSON.parse(data.toString());
      } catch {
        return;
      }
      if (ready !== 'open' && ready(frame)) settle();
      onFrame(frame);
    });
  });
}

/** The plain server and the service: one `ws` socket per client; they differ in URL, readiness and frames. */
function wsLeg(
  senderUrl: string,
  receiverUrl: (index: number) => string,
  ready: ((frame: any) => boolean) | 'open',
  onFrame: (index: number, frame: any) => void,
): Leg {
  const sockets = new Map<number, WebSocket>();
  let sender: WebSocket | undefined;
  return {
    async openSender() {
      sender = await openSocket(senderUrl, senderFrame, ready);
    },
    async openReceiver(index) {
      const url = receiverUrl(index);
      sockets.get(index)?.terminate();
      sockets.set(index, await openSocket(url, (frame) => onFrame(index, frame), ready));
    },
    send(workload, run, seq) {
      const frame =
        workload === 'message'
          ? { type: 'message', content: messageContent(run, seq, nowMs()) }
          : { type: CLIENT_EVENT, data: clientData(run, seq) };
      sender?.send(JSON.stringify(frame));
    },
    closers: () => [...sockets.values(), sender].flatMap((socket) => (socket ? [() => socket.close()] : [])),
  };
}

/** Channel authorization of one pusher-js client: `auth` (and `channel_data`) for its socket. */
type Authorize = (index: number | 'sender', socketId: string, channel: string) => Promise<{ auth: string; channel_data?: string }>;

/**
 * pusher-js clients, one per receiver and one for the sender, all on `channel`: Soketi and the
 * service's Pusher endpoint alike. `messageSender`, when given, opens a native socket that sends the
 * persisted messages (a Pusher client cannot send one).
 */
function pusherLeg(
  options: { readonly appKey: string; readonly host: string; readonly port: number; readonly channel: string },
  authorize: Authorize,
  messageSender?: () => Promise<WebSocket>,
): Leg {
  const clients = new Map<number | 'sender', Pusher>();
  let senderChannel: Channel | undefined;
  let nativeSender: WebSocket | undefined;
  const open = (index: number | 'sender'): Promise<Channel> =>
    new Promise((resolve, reject) => {
      const pusher = new Pusher(options.appKey, {
        cluster: 'local',
        wsHost: options.host,
        wsPort: options.port,
        forceTLS: false,
        enabledTransports: ['ws'],
        disableStats: true,
        channelAuthorization: {
          customHandler: ({ socketId, channelName }, callback) =>
            void authorize(index, socketId, channelName).then(
              (answer) => callback(null, answer),
              (error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), null),
            ),
        },
      });
      clients.get(index)?.disconnect();
      clients.set(index, pusher);
      const fail = (why: string) => (error: unknown) => {
        clearTimeout(timer);
        reject(new Error(`${why}: ${JSON.stringify(error)}`));
      };
      const timer = setTimeout(() => reject(new Error(`no subscription within ${connectTimeoutMs} ms`)), connectTimeoutMs);
      const channel = pusher.subscribe(options.channel);
      channel.bind_global(() => {
        lastFrameAt = performance.now();
        framesSeen++;
      });
      channel.bind('pusher:subscription_succeeded', () => {
        clearTimeout(timer);
        resolve(channel);
      });
      channel.bind('pusher:subscription_error', fail('subscription refused'));
      pusher.connection.bind('error', fail('connection error'));
      if (index === 'sender') {
        // A refused client event comes back as `pusher:error` on the connection.
        pusher.connection.bind('error', (error: { data?: { code?: unknown } }) =>
          senderFrame({ type: 'error', error: { code: `pusher ${String(error?.data?.code ?? 'error')}` } }),
        );
      } else {
        channel.bind(CLIENT_EVENT, (data: unknown) => deliver(index, data));
        channel.bind('message', (message: { content?: unknown } | undefined) => deliver(index, message?.content));
      }
    });
  return {
    async openSender() {
      senderChannel = await open('sender');
      nativeSender = await messageSender?.();
    },
    async openReceiver(index) {
      await open(index);
    },
    send(workload, run, seq) {
      if (workload === 'message') nativeSender?.send(JSON.stringify({ type: 'message', content: messageContent(run, seq, nowMs()) }));
      else senderChannel?.trigger(CLIENT_EVENT, clientData(run, seq));
    },
    closers: () => [
      ...[...clients.values()].map((client) => () => client.disconnect()),
      ...(nativeSender ? [() => nativeSender?.close()] : []),
    ],
  };
}

/** `POST /auth/channel` as the user of `token`, in JSON: what pusher-js's auth endpoint would get, form-encoded. */
async function serviceAuth(url: string, token: string | undefined, socketId: string, channel: string) {
  if (!token) throw new Error('no token for a receiver');
  const response = await fetch(url, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ socket_id: socketId, channel_name: channel }),
  });
  const body = (await response.json()) as { auth: string; channel_data?: string };
  if (response.status !== 200) throw new Error(`POST /auth/channel answered ${response.status} ${JSON.stringify(body)}`);
  return body;
}

function configure(target: TargetConfig): Leg {
  if (target.kind === 'soketi')
    return pusherLeg(target, async (_index, socketId, channel) => ({
      auth: signChannel(target.appKey, target.appSecret, socketId, channel),
    }));
  if (target.kind === 'pusher')
    return pusherLeg(
      target,
      (index, socketId, channel) =>
        serviceAuth(target.authUrl, index === 'sender' ? target.senderToken : target.receiverTokens[index], socketId, channel),
      () => openSocket(target.messageSenderUrl, senderFrame, (frame) => frame.type === 'connected'),
    );
  if (target.kind === 'plain')
    return wsLeg(
      target.url,
      () => target.url,
      'open',
      (index, frame) => deliver(index, frame.data),
    );
  const url = (token: string | undefined) => {
    if (!token) throw new Error(`no token for a receiver: the bench made ${target.receiverTokens.length}`);
    return `${target.wsBase}/ws/rooms/${encodeURIComponent(target.roomId)}?token=${token}&history=0`;
  };
  return wsLeg(
    url(target.senderToken),
    (index) => url(target.receiverTokens[index]),
    (frame) => frame.type === 'connected',
    (index, frame) => {
      if (frame.type === 'message') deliver(index, frame.message?.content);
      else if (frame.type === 'event' && frame.event === CLIENT_EVENT) deliver(index, frame.data);
    },
  );
}

/** Opens receivers `indexes` with at most `concurrency` handshakes in flight; the first failure rejects. */
async function openAll(indexes: readonly number[], concurrency: number): Promise<void> {
  const active = leg as Leg;
  let next = 0;
  let failed = false;
  await Promise.all(
    Array.from({ length: Math.max(1, Math.min(concurrency, indexes.length)) }, async () => {
      while (next < indexes.length && !failed) {
        await active.openReceiver(indexes[next++] as number).catch((error: unknown) => {
          failed = true;
          throw error;
        });
      }
    }),
  );
}

async function quiet(quietMs: number, maxMs: number) {
  const started = performance.now();
  const framesBefore = framesSeen;
  for (;;) {
    const now = performance.now();
    const done = now - lastFrameAt >= quietMs;
    if (done || now - started >= maxMs) return { ms: now - started, quiet: done, frames: framesSeen - framesBefore };
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** Sends `count` frames at `rate` per second (open loop), then waits for what is missing up to `drainMs`. */
async function measureWindow(id: number, workload: Workload, rate: number, count: number, drainMs: number, needAcks: boolean) {
  const active = leg as Leg;
  const seen = Array.from({ length: receiverCount }, () => new Uint8Array(count));
  const w: Window = {
    id,
    capacity: count,
    seen,
    latencies: [],
    senderErrors: {},
    sent: 0,
    delivered: 0,
    duplicates: 0,
    acks: 0,
    lastDeliveryAt: 0,
  };
  current = w;
  const cpuBefore = process.cpuUsage();
  const eluBefore = performance.eventLoopUtilization();
  const interval = 1000 / rate;
  const started = performance.now();
  await new Promise<void>((resolve) => {
    const tick = () => {
      const elapsed = performance.now() - started;
      const due = Math.min(count, Math.floor(elapsed / interval) + 1);
      while (w.sent < due) active.send(workload, id, w.sent++);
      if (w.sent >= count) resolve();
      else setTimeout(tick, Math.max(0, w.sent * interval - elapsed));
    };
    tick();
  });
  const expected = w.sent * seen.length;
  const done = () => w.delivered >= expected && (!needAcks || w.acks >= w.sent);
  if (!done()) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => w.progress?.(true), drainMs);
      w.progress = (timeUp) => {
        if (!timeUp && !done()) return;
        clearTimeout(timer);
        w.progress = undefined;
        resolve();
      };
    });
  }
  // Frames of this window that come later count as strays.
  current = undefined;
  const cpu = process.cpuUsage(cpuBefore);
  const sorted = Float64Array.from(w.latencies).sort();
  /** Nearest-rank percentile of the sorted latencies (a window holds up to a few hundred thousand). */
  const rank = (p: number) => (sorted.length ? (sorted[Math.max(1, Math.ceil((p / 100) * sorted.length)) - 1] as number) : Number.NaN);
  const complete = w.delivered >= expected;
  const result = {
    sent: w.sent,
    /** sent × receivers: every receiver gets every frame once; the sender gets none. */
    expected,
    delivered: w.delivered,
    duplicates: w.duplicates,
    /** `error` frames to the sender, by code. */
    senderErrors: w.senderErrors,
    /** Send to receipt, over every delivery of the window. */
    latencyMs: { p50: rank(50), p99: rank(99), max: sorted.at(-1) ?? Number.NaN, mean: sum(w.latencies) / w.latencies.length },
    /** First send to the last delivery (or to the end of the drain when some never came). */
    spanMs: (complete ? w.lastDeliveryAt : performance.now()) - started,
    /** Every expected delivery arrived within the drain. */
    complete,
    /** The child's own CPU (all threads) and event-loop use over the window, drain included. */
    cpuMs: (cpu.user + cpu.system) / 1000,
    eventLoopUtilization: performance.eventLoopUtilization(eluBefore).utilization,
  };
  return { result, window: w };
}

/** Run ids of verification frames: negative, so they never collide with the bench's windows. */
let verifyId = -1;

const methods = {
  async configure(target: TargetConfig) {
    leg = configure(target);
  },

  /**
   * Grows the room to `receivers` (the sender first) and answers the time until every new socket
   * was ready (`connected` frame, open, or subscription succeeded); then waits until no frame came
   * for a while (`settleMs`), and sends a check event, reopening the receivers it missed, up to 3
   * times (`missed`: how many in each such round): a receiver the server forgot at connect would
   * otherwise starve every window after it.
   */
  async grow(receivers: number, { concurrency, timeoutMs, quietMs }: { concurrency: number; timeoutMs: number; quietMs: number }) {
    if (!leg) throw new Error('receivers: not configured');
    connectTimeoutMs = timeoutMs;
    const started = performance.now();
    if (!senderOpen) await leg.openSender();
    senderOpen = true;
    await openAll(
      Array.from({ length: Math.max(0, receivers - receiverCount) }, (_, i) => receiverCount + i),
      concurrency,
    );
    receiverCount = Math.max(receiverCount, receivers);
    const ms = performance.now() - started;
    const settleMs = (await quiet(quietMs, 20_000)).ms;
    const missed: number[] = [];
    for (let round = 0; ; round++) {
      const { window } = await measureWindow(verifyId--, 'client', 1000, 1, 3000, false);
      const lost = window.seen.flatMap((seen, index) => (seen[0] ? [] : [index]));
      if (lost.length === 0 || round >= 3) return { ms, settleMs, missed, stillMissing: lost.length };
      missed.push(lost.length);
      await openAll(lost, concurrency);
      await quiet(300, 10_000);
    }
  },

  /** Returns once no frame has arrived for `quietMs` (presence and other follow-ups done), or after `maxMs`. */
  quiet,

  /**
   * One window: `count` frames at `rate` per second from the sender (open loop), then up to
   * `drainMs` for missing deliveries (and, with `acks`, for the sender's acks).
   */
  async run(spec: { id: number; workload: Workload; rate: number; count: number; drainMs: number; acks: boolean }) {
    return (await measureWindow(spec.id, spec.workload, spec.rate, spec.count, spec.drainMs, spec.acks)).result;
  },
};

export type ReceiversApi = typeof methods;

// Closes everything in batches of 50 every 20 ms, not all at once: how the bench leaves should not
// turn into a disconnect storm that the next figure (or the server's shutdown) trips over; then
// lets the close handshakes go out before the process ends.
serveIpc(methods, async () => {
  const closers = leg?.closers() ?? [];
  for (let start = 0; start < closers.length; start += 50) {
    for (const close of closers.slice(start, start + 50)) close();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
});
