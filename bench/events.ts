/**
 * Domain events: how long a stored message takes to reach its subscribers through the outbox (the
 * table stream, the publisher, the event topic, one queue per subscriber), measured from the
 * `POST /messages` answer to a webhook receiver's request and to a watcher's `watchlist_event`
 * frame; and the AWS work the event path adds per message (stream consumer invocations, topic
 * publishes, subscriber queue requests), none of it on the sender's path.
 */
import WebSocket from 'ws';
import { type Bench, type Context, fmt, GOALS } from './harness';
import { recording } from './instrument';
import { createProject, latencySummary, round, sleep, startWebhookReceiver } from './util';

const MESSAGES = 100;
/** One message every `1000 / RATE` ms, so each waits for no other. */
const RATE = 20;
const WARMUP = 10;
/** The stream poller's interval between GetRecords calls that found nothing (Lambda polls a shard about 4 times a second). */
const POLL_INTERVAL_MS = 100;

async function measure({ service, log }: Context) {
  const { runtime, api } = service;
  const webhookAt = new Map<number, number>();
  const receiver = await startWebhookReceiver((event) => {
    webhookAt.set(event.payload.messageId, performance.now());
    return 204;
  });
  let socket: WebSocket | undefined;
  try {
    const project = await createProject(api, 'event-latency');
    const [alice, bob] = await Promise.all([project.token('alice'), project.token('bob')]);
    const roomId = `latency-${Date.now()}`;
    await api.expect(201, '/rooms', { token: alice, body: { id: roomId, type: 'group', members: ['bob'] } });
    await api.expect(201, '/users/bob/watchlist', { token: bob, body: { type: 'room', targetId: roomId } });
    await receiver.register(api, project.apiKey);
    const watcherAt = new Map<number, number>();
    const watcher = new WebSocket(`${runtime.baseUrl.replace(/^http/, 'ws')}/ws/user/bob?token=${bob}`);
    socket = watcher;
    watcher.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as { type: string; message?: { id: number } };
      if (frame.type === 'watchlist_event' && frame.message) watcherAt.set(frame.message.id, performance.now());
    });
    await new Promise((resolve, reject) => watcher.once('open', resolve).once('error', reject));
    runtime.startConsumers();

    const storedAt = new Map<number, number>();
    const send = async (index: number) => {
      const { body } = await api.expect(201, '/messages', { token: alice, body: { roomId, content: `event latency ${index}` } });
      storedAt.set(body.id, performance.now());
    };
    const waitForAll = async (timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      const done = () => [...storedAt.keys()].every((id) => webhookAt.has(id) && watcherAt.has(id));
      while (!done() && Date.now() < deadline) await sleep(20);
      if (!done()) throw new Error(`event latency: ${webhookAt.size} webhook and ${watcherAt.size} watcher arrivals of ${storedAt.size}`);
    };

    for (let index = 0; index < WARMUP; index++) await send(index);
    await waitForAll(30_000);
    for (const map of [storedAt, webhookAt, watcherAt]) map.clear();

    const before = runtime.stats();
    const queueCalls = await recording(service.clients, async (recorder) => {
      for (let index = 0; index < MESSAGES; index++) {
        const started = performance.now();
        await send(1000 + index);
        await sleep(Math.max(0, 1000 / RATE - (performance.now() - started)));
      }
      await waitForAll(30_000);
      // The subscribers delete what they took just after handing it over.
      await sleep(500);
      return recorder.sqs;
    });
    const after = runtime.stats();
    const perMessage = (count: number) => round(count / MESSAGES, 3);
    const latencies = (arrivals: Map<number, number>) => latencySummary([...storedAt].map(([id, at]) => (arrivals.get(id) ?? at) - at));
    const queues = (stats: typeof before) => stats.queueConsumers.nonEmptyReceives + stats.queueConsumers.deleteRequests;
    const result = {
      messages: MESSAGES,
      ratePerSecond: RATE,
      toWebhookMs: latencies(webhookAt),
      toWatcherMs: latencies(watcherAt),
      /** Per message, everything after the sender's answer. */
      perMessage: {
        streamInvocations: perMessage(after.stream.invocations - before.stream.invocations),
        snsRequests: perMessage(queueCalls.filter((call) => call.command.startsWith('SNS:')).length),
        subscriberQueueRequests: perMessage(queues(after) - queues(before)),
        subscriberInvocations: perMessage(after.queueConsumers.invocations - before.queueConsumers.invocations),
      },
      pollIntervalMs: POLL_INTERVAL_MS,
    };
    log(
      `  write → webhook p50 ${result.toWebhookMs.p50} / p99 ${result.toWebhookMs.p99} ms, write → watcher p50 ${result.toWatcherMs.p50} / p99 ${result.toWatcherMs.p99} ms`,
    );
    return result;
  } finally {
    socket?.close();
    await receiver.close();
  }
}

type Events = Awaited<ReturnType<typeof measure>>;

export const events: Bench<Events> = {
  id: 'events',
  name: 'Events',
  needs: 'service',
  run: measure,

  goals: (result) =>
    (
      [
        ['webhook', 'webhook receiver', result.toWebhookMs],
        ['watcher', "watcher's frame", result.toWatcherMs],
      ] as const
    ).map(([id, label, latency]) => ({
      id: `events.${id}`,
      name: `Event latency, write → ${label}, p99`,
      target: `≤ ${GOALS.eventP99Ms / 1000} s`,
      measured: `${fmt(latency.p99)} ms (p50 ${fmt(latency.p50)} ms)`,
      pass: latency.p99 <= GOALS.eventP99Ms,
    })),

  section: (result) => {
    const per = result.perMessage;
    const row = (label: string, l: Events['toWebhookMs']) => `| ${label} | ${l.p50} ms | ${l.p99} ms | ${l.max} ms |`;
    return `## Domain events: from the write to the subscribers

${result.messages} messages are sent with \`POST /messages\`, one every ${1000 / result.ratePerSecond} ms, into a room with a webhook (\`message.created\`, a local receiver answering 204) and a watcher whose user channel is open. Each message item carries its own \`message.created\` to the table stream; the stream poller (Lambda's DynamoDB event source locally, GetRecords every ${result.pollIntervalMs} ms when idle) hands it to the event publisher, which publishes it to the event topic (the SNS stand-in), whose filter policies put it on the webhook subscriber's queue and the watcher subscriber's queue; each queue's consumer acts on it. Latency runs from the sender's 201 to the receiver's request and to the watcher's \`watchlist_event\` frame.

| Figure | p50 | p99 | max |
| --- | --- | --- | --- |
${row('Write → webhook receiver', result.toWebhookMs)}
${row("Write → watcher's frame", result.toWatcherMs)}

Work per message after the sender's answer: ${per.streamInvocations} stream consumer invocations (batched), ${per.snsRequests} SNS requests (PublishBatch, up to 10 events each), ${per.subscriberQueueRequests} subscriber queue requests (receives that carried it and deletes, two subscribers) in ${per.subscriberInvocations} subscriber invocations. On AWS, reading the stream for a Lambda trigger is free; SNS deliveries to SQS are free; SNS bills each published event.`;
  },
};
