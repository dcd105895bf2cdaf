/**
 * A quick measure of coalesced delivery (issue 29, docs/architecture.md "Hot rooms: coalesced
 * delivery"): one room marked coalesced, `RECEIVERS` sockets with `batch=1`, a sender at `RATE`
 * messages a second over HTTP for `SECONDS`; prints send → receive p50/p99 (from the send's start
 * to each receiver's frame) and frames per message per receiver. `tsx bench/coalesced-latency.ts`
 * (env RECEIVERS, RATE, SECONDS, WINDOW_MS to vary; QUIET=1 for the uncoalesced baseline).
 */
import WebSocket from 'ws';
import { startLocalRuntime } from '../lib/local/runtime';

const RECEIVERS = Number(process.env.RECEIVERS ?? 100);
const RATE = Number(process.env.RATE ?? 20);
const SECONDS = Number(process.env.SECONDS ?? 10);
const WINDOW_MS = process.env.WINDOW_MS ?? '200';
const OPERATOR_KEY = 'coalesce-bench-operator-key-0123456789';

const percentile = (values: readonly number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};

async function main() {
  const runtime = await startLocalRuntime({
    port: 0,
    env: {
      CHAT_OPERATOR_KEY: OPERATOR_KEY,
      RATE_LIMIT_MESSAGES_PER_MINUTE: '100000',
      REALTIME_COALESCE_WINDOW_MS: WINDOW_MS,
      ...(process.env.QUIET === '1' ? { REALTIME_COALESCE_THRESHOLD_PER_SECOND: '100000' } : {}),
    },
  });
  const call = async (path: string, init: { token?: string; apiKey?: string; body?: unknown; headers?: Record<string, string> }) => {
    const response = await fetch(`${runtime.baseUrl}${path}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(init.token ? { authorization: `Bearer ${init.token}` } : {}),
        ...(init.apiKey ? { 'x-service-api-key': init.apiKey } : {}),
        ...init.headers,
      },
      body: JSON.stringify(init.body),
    });
    return (await response.json()) as Record<string, any>;
  };
  try {
    const project = await call('/platform/projects', { body: { name: 'bench' }, headers: { 'x-service-operator-key': OPERATOR_KEY } });
    const tokenOf = async (userId: string) => (await call('/auth/token', { apiKey: project.apiKey, body: { userId } })).token as string;
    const roomId = `bench-${Date.now()}`;
    const userIds = Array.from({ length: RECEIVERS }, (_, i) => `receiver-${i}`);
    const sender = await tokenOf('sender');
    const made = await call('/rooms', { token: sender, body: { id: roomId, type: 'group' } });
    if (made.id !== roomId) throw new Error(`room creation failed: ${JSON.stringify(made)}`);
    for (const userId of userIds) await call(`/rooms/${roomId}/members`, { token: sender, body: { userId, role: 'member' } });
    const { setRoomCoalesceUntil } = await import('#shared/db/room');
    // QUIET=1: the same room left quiet, with the room heat out of the way: the baseline of immediate single frames.
    if (process.env.QUIET !== '1') await setRoomCoalesceUntil(project.projectId, roomId, Date.now() + 3_600_000);

    const sentAt = new Map<number, number>();
    const latencies: number[] = [];
    let frames = 0;
    let delivered = 0;
    const sockets = await Promise.all(
      userIds.map(async (userId) => {
        const token = await tokenOf(userId);
        const socket = new WebSocket(`${runtime.baseUrl.replace(/^http/, 'ws')}/ws/rooms/${roomId}?token=${token}&history=0&batch=1`);
        socket.on('message', (data) => {
          const now = performance.now();
          const frame = JSON.parse(String(data));
          const inner = frame.type === 'batch' ? frame.frames : [frame];
          if (frame.type === 'batch' || frame.type === 'message') frames++;
          for (const message of inner) {
            if (message.type !== 'message') continue;
            delivered++;
            const started = sentAt.get(Number(message.message.content));
            if (started !== undefined) latencies.push(now - started);
          }
        });
        await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
        return socket;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 6000)); // the room cache and the welcome jobs

    const total = RATE * SECONDS;
    const begun = performance.now();
    const sends: Promise<unknown>[] = [];
    for (let i = 0; i < total; i++) {
      const due = begun + (i * 1000) / RATE;
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
      sentAt.set(i, performance.now());
      sends.push(call('/messages', { token: sender, body: { roomId, content: String(i) } }));
    }
    await Promise.all(sends);
    const deadline = performance.now() + 30_000;
    while (delivered < total * RECEIVERS && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    console.log(
      JSON.stringify({
        receivers: RECEIVERS,
        rate: RATE,
        seconds: SECONDS,
        windowMs: Number(WINDOW_MS),
        delivered: `${delivered}/${total * RECEIVERS}`,
        p50Ms: Math.round(percentile(latencies, 50)),
        p99Ms: Math.round(percentile(latencies, 99)),
        framesPerMessagePerReceiver: Number((frames / delivered).toFixed(3)),
      }),
    );
    for (const socket of sockets) socket.close();
    await new Promise((resolve) => setTimeout(resolve, 2000));
  } finally {
    await runtime.stop();
  }
}

await main();
