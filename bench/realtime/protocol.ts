/**
 * The realtime fan-out bench's wire between the bench process (which hosts or starts the server
 * under test) and the receivers child process (bench/realtime/receivers.ts), which holds the
 * sender and every receiver socket. Nothing here starts anything: both sides import it.
 */
import { MESSAGE_CONTENT } from '../client';

/** `plain`: the `ws` broadcast server; `soketi`: Soketi through pusher-js; `service`: the local runtime. */
export type TargetKind = 'plain' | 'soketi' | 'service';

/** `message`: a persisted chat message (service only); `client`: a `client-bench` event. */
export type Workload = 'message' | 'client';

/** The client event name every target carries. */
export const CLIENT_EVENT = 'client-bench';

/** How the child reaches the server under test. */
export type TargetConfig =
  /** `url` names the room: `ws://127.0.0.1:<port>/rooms/<roomId>`. */
  | { readonly kind: 'plain'; readonly url: string }
  | {
      readonly kind: 'soketi';
      readonly host: string;
      readonly port: number;
      readonly appKey: string;
      /** The child signs channel authorizations itself, as an app server would. */
      readonly appSecret: string;
      /** A private channel: Pusher only relays client events on private and presence channels. */
      readonly channel: string;
    }
  | {
      readonly kind: 'service';
      /** `ws://127.0.0.1:<port>` of the local gateway. */
      readonly wsBase: string;
      readonly roomId: string;
      readonly senderToken: string;
      /** One token per receiver (each its own user); at least as many as the largest N. */
      readonly receiverTokens: readonly string[];
    };

/** One paced window: `rate` frames per second from one sender for `durationMs`. */
export interface RunSpec {
  readonly id: number;
  readonly workload: Workload;
  /** Frames per second, open loop: a frame is sent when its time comes, whatever came back. */
  readonly rate: number;
  readonly durationMs: number;
  /** How long after the last send the child waits for missing deliveries before it reports. */
  readonly drainMs: number;
}

/** What the child saw of one window. Times are ms on the child's clock. */
export interface RunResult {
  readonly sent: number;
  readonly receivers: number;
  /** sent × receivers: every receiver gets every frame once; the sender gets none. */
  readonly expected: number;
  readonly delivered: number;
  readonly duplicates: number;
  /** Frames of earlier windows that arrived during this one (late stragglers). */
  readonly strays: number;
  /** `ack` frames to the sender (service `message` workload). */
  readonly acks: number;
  /** `error` frames to the sender, by code. */
  readonly senderErrors: Readonly<Record<string, number>>;
  /** Send to receipt, over every delivery of the window. */
  readonly latencyMs: { readonly p50: number; readonly p99: number; readonly max: number; readonly mean: number };
  /** First send to last send. */
  readonly sendMs: number;
  /** First send to the last delivery (or to the end of the drain when some never came). */
  readonly spanMs: number;
  /** Every expected delivery arrived within the drain. */
  readonly complete: boolean;
  /** The child's own CPU (all threads) and event-loop use over the window, drain included. */
  readonly cpuMs: number;
  readonly eventLoopUtilization: number;
}

/** One frame sent and waited for: every receiver has it (and the sender its `ack`), or the timeout passed. */
export interface ProbeResult {
  readonly delivered: number;
  readonly expected: number;
  readonly ms: number;
}

export type ToReceivers =
  | { readonly type: 'configure'; readonly target: TargetConfig }
  /** Connects the sender if it is not yet, then receivers until there are `receivers`; answered by `connected`. */
  | { readonly type: 'connect'; readonly receivers: number; readonly concurrency: number; readonly timeoutMs: number }
  /** Returns once no frame has arrived for `quietMs` (presence and other follow-ups done), or after `maxMs`. */
  | { readonly type: 'quiet'; readonly quietMs: number; readonly maxMs: number }
  /**
   * Sends one client event and reopens the receivers it missed, up to `rounds` times; answered by
   * `verified` with how many were missed in each round that had misses.
   */
  | { readonly type: 'verify'; readonly timeoutMs: number; readonly rounds: number; readonly concurrency: number }
  | { readonly type: 'run'; readonly run: RunSpec }
  | { readonly type: 'probe'; readonly id: number; readonly workload: Workload; readonly timeoutMs: number }
  | { readonly type: 'exit' };

export type FromReceivers =
  | { readonly type: 'configured' }
  /** `ms`: time to open the new receivers (each ready: `connected` frame, or subscription succeeded). */
  | { readonly type: 'connected'; readonly receivers: number; readonly ms: number }
  | { readonly type: 'quiet'; readonly ms: number; readonly quiet: boolean; readonly frames: number }
  | { readonly type: 'verified'; readonly missing: readonly number[]; readonly stillMissing: number }
  | { readonly type: 'ran'; readonly result: RunResult }
  | { readonly type: 'probed'; readonly result: ProbeResult }
  | { readonly type: 'failed'; readonly error: string };

/** Epoch milliseconds with sub-millisecond precision, comparable across processes on this machine. */
export const nowMs = () => performance.timeOrigin + performance.now();

/** A 120-character chat line rides in every frame, so all targets carry payloads of the same size. */
export const PAYLOAD_TEXT = MESSAGE_CONTENT;

/** The stamp a persisted message carries at the start of its content (no `@`, so no mention). */
export const messageContent = (run: number, seq: number, sentAt: number) => `rt:${run}:${seq}:${sentAt.toFixed(3)} ${PAYLOAD_TEXT}`;

const CONTENT_STAMP = /^rt:(\d+):(\d+):(\d+(?:\.\d+)?) /;

export function parseMessageContent(content: unknown): { run: number; seq: number; sentAt: number } | undefined {
  if (typeof content !== 'string') return undefined;
  const match = CONTENT_STAMP.exec(content);
  if (!match) return undefined;
  return { run: Number(match[1]), seq: Number(match[2]), sentAt: Number(match[3]) };
}

/** The `data` of a client event. */
export interface ClientEventData {
  readonly run: number;
  readonly seq: number;
  readonly sentAt: number;
  readonly text: string;
}

export function parseClientData(data: unknown): ClientEventData | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const { run, seq, sentAt } = data as Record<string, unknown>;
  if (typeof run !== 'number' || typeof seq !== 'number' || typeof sentAt !== 'number') return undefined;
  return data as ClientEventData;
}
