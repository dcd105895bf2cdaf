/**
 * The runtime child of the hot-rooms bench (bench/hot-rooms.ts): a local runtime of its own, with
 * the settings the bench gives it (the coalescing threshold above all, which the handler modules
 * read from `process.env` once, at their first import, so a runtime with other settings needs
 * another process). Receivers and sender stay in the bench process; this child answers what only
 * the runtime knows: the room item's `coalesceUntil` and the gateway's `@connections` post count.
 */
import { type LocalRuntime, startLocalRuntime } from '../lib/local/runtime';
import { serveIpc } from './util';

let runtime: LocalRuntime | undefined;

const running = () => {
  if (!runtime) throw new Error('no runtime: call start first');
  return runtime;
};

/** The coalescing settings the runtime's handlers read (defaults included). */
export interface RuntimeSettings {
  readonly thresholdPerSecond: number;
  readonly windowMs: number;
  readonly holdSeconds: number;
  readonly cacheTtlMs: number;
}

export type HotRoomsRuntimeApi = {
  start(env: Record<string, string>): Promise<{ baseUrl: string; settings: RuntimeSettings }>;
  coalesceUntil(projectId: string, roomId: string): Promise<number | null>;
  markCoalesced(projectId: string, roomId: string, untilMs: number): Promise<boolean>;
  posts(): Promise<number>;
};

const methods: HotRoomsRuntimeApi = {
  async start(env) {
    runtime = await startLocalRuntime({ port: 0, env });
    const { config } = await import('#shared/config');
    return {
      baseUrl: runtime.baseUrl,
      settings: {
        thresholdPerSecond: config.REALTIME_COALESCE_THRESHOLD_PER_SECOND,
        windowMs: config.REALTIME_COALESCE_WINDOW_MS,
        holdSeconds: config.REALTIME_COALESCE_HOLD_SECONDS,
        cacheTtlMs: config.CACHE_TTL_MS,
      },
    };
  },
  async coalesceUntil(projectId, roomId) {
    running();
    const { findRoom } = await import('#shared/db/room');
    return (await findRoom(projectId, roomId))?.coalesceUntil ?? null;
  },
  async markCoalesced(projectId, roomId, untilMs) {
    running();
    const { setRoomCoalesceUntil } = await import('#shared/db/room');
    return setRoomCoalesceUntil(projectId, roomId, untilMs);
  },
  async posts() {
    return running().stats().connections.posts;
  },
};

serveIpc(methods, async () => {
  await runtime?.stop();
});
