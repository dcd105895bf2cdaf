/**
 * Event figures: how long a stored message takes to reach its subscribers through the outbox (the
 * table stream, the publisher, the event topic, one queue per subscriber), measured from the
 * `POST /messages` answer to a webhook receiver's request and to a watcher's `watchlist_event`
 * frame; and the AWS work the event path adds per message (stream consumer invocations, topic
 * publishes, subscriber queue requests), none of it on the sender's path.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import type { LocalRuntime } from '../lib/local/runtime';
import { type Api, createProject } from './client';
import type { Recorder } from './instrument';
import { percentile, round, sleep } from './stats';

export interface EventLatencyResult {
  readonly messages: number;
  /** One message every `1000 / rate` ms, so each waits for no other. */
  readonly ratePerSecond: number;
  readonly toWebhookMs: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly toWatcherMs: { readonly p50: number; readonly p99: number; readonly max: number };
  /** Per message, everything after the sender's answer. */
  readonly perMessage: {
    readonly streamInvocations: number;
    readonly snsRequests: number;
    readonly subscriberQueueRequests: number;
    readonly subscriberInvocations: number;
  };
  /** The stream poller's interval between GetRecords calls that found nothing (Lambda polls a shard about 4 times a second). */
  readonly pollIntervalMs: number;
}

const MESSAGES = 100;
const RATE = 20;
const WARMUP = 10;

const summary = (values: number[]) => ({
  p50: round(percentile(values, 50), 1),
  p99: round(percentile(values, 99), 1),
  max: round(Math.max(...values), 1),
});

/** Needs a runtime whose consumers run (or will be started here) and a lifted message rate limit. */
export async function measureEventLatency(options: {
  runtime: LocalRuntime;
  api: Api;
  recorder: Recorder;
  log: (line: string) => void;
}): Promise<EventLatencyResult> {
  const { runtime, api, recorder, log } = options;
  const webhookAt = new Map<number, number>();
  const receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      const event = JSON.parse(body) as { payload: { messageId: number } };
      webhookAt.set(event.payload.messageId, performance.now());
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  let socket: WebSocket | undefined;
  try {
    const project = await createProject(api, 'event-latency');
    const [alice, bob] = await Promise.all([project.token('alice'), project.token('bob')]);
    const roomId = `latency-${Date.now()}`;
    await api.expect(201, '/rooms', { token: alice, body: { id: roomId, type: 'group', members: ['bob'] } });
    await api.expect(201, '/users/bob/watchlist', { token: bob, body: { type: 'room', targetId: roomId } });
    const { port } = receiver.address() as AddressInfo;
    await api.expect(201, '/webhooks/register', {
      apiKey: project.apiKey,
      body: { url: `http://127.0.0.1:${port}/hook`, eventTypes: ['message.created'] },
    });
    const watcherAt = new Map<number, number>();
    socket = new WebSocket(`${runtime.baseUrl.replace(/^http/, 'ws')}/ws/user/bob?token=${bob}`);
    socket.on('message', (data) => {
      const frame = JSON.parse(data.toString()) as { type: string; message?: { id: number } };
      if (frame.type === 'watchlist_event' && frame.message) watcherAt.set(frame.message.id, performance.now());
    });
    await new Promise<void>((resolve, reject) => {
      socket?.once('open', () => resolve());
      socket?.once('error', reject);
    });
    runtime.startConsumers();

    const storedAt = new Map<number, number>();
    const send = async (index: number) => {
      const { body } = await api.expect(201, '/messages', { token: alice, body: { roomId, content: `event latency ${index}` } });
      storedAt.set((body as { id: number }).id, performance.now());
    };
    const waitForAll = async (timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      const done = () => [...storedAt.keys()].every((id) => webhookAt.has(id) && watcherAt.has(id));
      while (!done() && Date.now() < deadline) await sleep(20);
      if (!done()) throw new Error(`event latency: ${webhookAt.size} webhook and ${watcherAt.size} watcher arrivals of ${storedAt.size}`);
    };

    for (let index = 0; index < WARMUP; index++) await send(index);
    await waitForAll(30_000);
    storedAt.clear();
    webhookAt.clear();
    watcherAt.clear();

    const before = runtime.stats();
    const mark = recorder.mark();
    for (let index = 0; index < MESSAGES; index++) {
      const started = performance.now();
      await send(1000 + index);
      await sleep(Math.max(0, 1000 / RATE - (performance.now() - started)));
    }
    await waitForAll(30_000);
    // The subscribers delete what they took just after handing it over.
    await sleep(500);
    const after = runtime.stats();
    const queueCalls = recorder.since(mark).sqs;

    const latencies = (arrivals: Map<number, number>) => [...storedAt].map(([id, at]) => (arrivals.get(id) ?? at) - at);
    const result: EventLatencyResult = {
      messages: MESSAGES,
      ratePerSecond: RATE,
      toWebhookMs: summary(latencies(webhookAt)),
      toWatcherMs: summary(latencies(watcherAt)),
      perMessage: {
        streamInvocations: round((after.stream.invocations - before.stream.invocations) / MESSAGES, 3),
        snsRequests: round(queueCalls.filter((call) => call.command.startsWith('SNS:')).length / MESSAGES, 3),
        subscriberQueueRequests: round(
          (after.queueConsumers.nonEmptyReceives -
            before.queueConsumers.nonEmptyReceives +
            after.queueConsumers.deleteRequests -
            before.queueConsumers.deleteRequests) /
            MESSAGES,
          3,
        ),
        subscriberInvocations: round((after.queueConsumers.invocations - before.queueConsumers.invocations) / MESSAGES, 3),
      },
      pollIntervalMs: 100,
    };
    log(
      `Events: write → webhook p50 ${result.toWebhookMs.p50} / p99 ${result.toWebhookMs.p99} ms, write → watcher p50 ${result.toWatcherMs.p50} / p99 ${result.toWatcherMs.p99} ms`,
    );
    return result;
  } finally {
    socket?.close();
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}

/** The section of docs/performance.md. */
export function renderEventLatencySection(result: EventLatencyResult): string {
  const per = result.perMessage;
  return `## Domain events: from the write to the subscribers

${result.messages} messages are sent with \`POST /messages\`, one every ${1000 / result.ratePerSecond} ms, into a room with a webhook (\`message.created\`, a local receiver answering 204) and a watcher whose user channel is open. Each message item carries its own \`message.created\` to the table stream; the stream poller (Lambda's DynamoDB event source locally, GetRecords every ${result.pollIntervalMs} ms when idle) hands it to the event publisher, which publishes it to the event topic (the SNS stand-in), whose filter policies put it on the webhook subscriber's queue and the watcher subscriber's queue; each queue's consumer acts on it. Latency runs from the sender's 201 to the receiver's request and to the watcher's \`watchlist_event\` frame.

| Figure | p50 | p99 | max |
| --- | --- | --- | --- |
| Write → webhook receiver | ${result.toWebhookMs.p50} ms | ${result.toWebhookMs.p99} ms | ${result.toWebhookMs.max} ms |
| Write → watcher's frame | ${result.toWatcherMs.p50} ms | ${result.toWatcherMs.p99} ms | ${result.toWatcherMs.max} ms |

Work per message after the sender's answer: ${per.streamInvocations} stream consumer invocations (batched), ${per.snsRequests} SNS requests (PublishBatch, up to 10 events each), ${per.subscriberQueueRequests} subscriber queue requests (receives that carried it and deletes, two subscribers) in ${per.subscriberInvocations} subscriber invocations. On AWS, reading the stream for a Lambda trigger is free; SNS deliveries to SQS are free; SNS bills each published event.
`;
}
