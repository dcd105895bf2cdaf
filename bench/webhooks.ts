/**
 * Webhook figures: deliveries per second from the webhook subscriber's queue to a local receiver
 * answering 204, latency from enqueue to receipt, and the AWS work per delivery (SQS requests, Lambda
 * invocations, DynamoDB requests and units, Step Functions state transitions) counted in the run.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { LocalRuntime } from '../lib/local/runtime';
import { type Api, createProject } from './client';
import type { Recorder } from './instrument';
import { percentile, round, sleep, sum } from './stats';

export interface WebhookBenchResult {
  readonly events: number;
  readonly seconds: number;
  readonly deliveriesPerSecond: number;
  readonly latencyMs: { readonly p50: number; readonly p99: number; readonly max: number };
  /** The same path at a steady 50 events/s: latency without a backlog. */
  readonly pacedLatencyMs: { readonly events: number; readonly p50: number; readonly p99: number; readonly max: number };
  /** Per successful first-attempt delivery. */
  readonly perDelivery: {
    readonly sqsRequests: number;
    readonly lambdaInvocations: number;
    readonly dynamoRequests: number;
    readonly dynamoWriteUnits: number;
    readonly dynamoReadUnits: number;
    readonly stateTransitions: number;
    readonly dynamoByCommand: Readonly<Record<string, number>>;
  };
  /** A delivery whose first attempt fails and second succeeds. */
  readonly retried: { readonly stateTransitions: number; readonly executions: number; readonly lambdaInvocations: number };
  /** US East list prices per million deliveries (first attempt succeeds), by service. */
  readonly pricePerMillion: Readonly<Record<string, number>>;
}

/** AWS list prices, us-east-1 (on-demand DynamoDB after the November 2024 reduction). */
export const PRICES = {
  sqsPerMillionRequests: 0.4,
  lambdaPerMillionInvocations: 0.2,
  dynamoPerMillionWriteUnits: 0.625,
  dynamoPerMillionReadUnits: 0.125,
  stepFunctionsPerMillionTransitions: 25,
} as const;

const EVENTS = 400;
const BATCH = 10;
const PACED_EVENTS = 100;
const PACED_RATE = 50;

/**
 * Needs a runtime started with `consumers: false` (so earlier figures are not disturbed) and a
 * short `WEBHOOK_RETRY_TIME_SCALE`; starts the consumers itself.
 */
export async function runWebhookBench(
  runtime: LocalRuntime,
  api: Api,
  recorder: Recorder,
  log: (line: string) => void,
): Promise<WebhookBenchResult> {
  let failNext = 0;
  const received = new Map<number, number>();
  const receiver = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      if (failNext > 0) {
        failNext--;
        response.writeHead(500).end();
        return;
      }
      const seq = (JSON.parse(body) as { payload: { messageId: number } }).payload.messageId;
      received.set(seq, performance.now());
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const producer = new SQSClient({
    endpoint: runtime.sqsEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    useQueueUrlAsEndpoint: false,
  });
  try {
    const project = await createProject(api, 'webhook-bench');
    const { port } = receiver.address() as AddressInfo;
    await api.expect(201, '/webhooks/register', {
      apiKey: project.apiKey,
      body: { url: `http://127.0.0.1:${port}/hook`, eventTypes: ['message.created'] },
    });
    runtime.startConsumers();
    // The webhook subscriber's own queue, as the event topic fills it (figure "Domain events" covers the way there).
    const queueUrl = runtime.queueUrls.WebhookDispatcher as string;
    const sentAt = new Map<number, number>();
    const enqueue = async (from: number, count: number) => {
      for (let start = from; start < from + count; start += BATCH) {
        const entries = Array.from({ length: Math.min(BATCH, from + count - start) }, (_, index) => {
          const seq = start + index;
          const event = {
            id: randomUUID(),
            type: 'message.created',
            projectId: project.projectId,
            payload: {
              roomId: 'bench',
              messageId: seq,
              userId: 'bench',
              content: 'webhook bench',
              parent_id: null,
              attachments: [],
              createdAt: new Date().toISOString(),
            },
            createdAt: new Date().toISOString(),
          };
          return { Id: String(index), MessageBody: JSON.stringify(event) };
        });
        const now = performance.now();
        for (const entry of entries) sentAt.set(JSON.parse(entry.MessageBody).payload.messageId, now);
        await producer.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
      }
    };
    const waitFor = async (count: number, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (received.size < count && Date.now() < deadline) await sleep(20);
      if (received.size < count) throw new Error(`webhook bench: ${received.size} of ${count} deliveries arrived`);
    };

    // Warm-up: handler modules, caches, JIT.
    await enqueue(0, 40);
    await waitFor(40, 30_000);
    received.clear();
    sentAt.clear();
    await sleep(300);

    const before = runtime.stats();
    const mark = recorder.mark();
    const started = performance.now();
    await enqueue(1000, EVENTS);
    await waitFor(EVENTS, 60_000);
    const seconds = (Math.max(...received.values()) - started) / 1000;
    await sleep(1200);
    const after = runtime.stats();
    const calls = recorder.since(mark).dynamo;
    const latencies = [...received.entries()].map(([seq, at]) => at - (sentAt.get(seq) ?? at));
    const byCommand: Record<string, number> = {};
    for (const call of calls) byCommand[call.command.replace(/Command$/, '')] = (byCommand[call.command.replace(/Command$/, '')] ?? 0) + 1;

    const consumerSqs =
      after.queueConsumers.nonEmptyReceives -
      before.queueConsumers.nonEmptyReceives +
      (after.queueConsumers.deleteRequests - before.queueConsumers.deleteRequests);
    const perDelivery = {
      // The receives that carried the event and the deletes that acknowledged it; the way to the
      // queue (stream, publisher, topic) is in the domain events figure.
      sqsRequests: round(consumerSqs / EVENTS, 3),
      lambdaInvocations: round((after.queueConsumers.invocations - before.queueConsumers.invocations) / EVENTS, 3),
      dynamoRequests: round(calls.length / EVENTS, 2),
      dynamoWriteUnits: round(sum(calls.map((call) => call.writeUnits)) / EVENTS, 2),
      dynamoReadUnits: round(sum(calls.map((call) => call.readUnits)) / EVENTS, 2),
      stateTransitions: round((after.stepFunctions.stateTransitions - before.stepFunctions.stateTransitions) / EVENTS, 3),
      dynamoByCommand: Object.fromEntries(Object.entries(byCommand).map(([command, count]) => [command, round(count / EVENTS, 2)])),
    };
    log(`Webhooks: ${EVENTS} deliveries in ${round(seconds, 2)} s, p99 ${round(percentile(latencies, 99), 1)} ms`);

    // Paced: one event every 20 ms, so each waits for no other.
    received.clear();
    sentAt.clear();
    for (let index = 0; index < PACED_EVENTS; index++) {
      await enqueue(10_000 + index, 1);
      await sleep(1000 / PACED_RATE);
    }
    await waitFor(PACED_EVENTS, 30_000);
    const paced = [...received.entries()].map(([seq, at]) => at - (sentAt.get(seq) ?? at));

    // One delivery that fails once: the retry path's cost.
    const retryBefore = runtime.stats();
    failNext = 1;
    await enqueue(5000, 1);
    await waitFor(1, 30_000);
    await sleep(500);
    const retryAfter = runtime.stats();

    return {
      events: EVENTS,
      seconds: round(seconds, 3),
      deliveriesPerSecond: round(EVENTS / seconds, 1),
      latencyMs: {
        p50: round(percentile(latencies, 50), 1),
        p99: round(percentile(latencies, 99), 1),
        max: round(Math.max(...latencies), 1),
      },
      pacedLatencyMs: {
        events: PACED_EVENTS,
        p50: round(percentile(paced, 50), 1),
        p99: round(percentile(paced, 99), 1),
        max: round(Math.max(...paced), 1),
      },
      perDelivery,
      retried: {
        stateTransitions: retryAfter.stepFunctions.stateTransitions - retryBefore.stepFunctions.stateTransitions,
        executions: retryAfter.stepFunctions.executionsStarted - retryBefore.stepFunctions.executionsStarted,
        lambdaInvocations: retryAfter.queueConsumers.invocations - retryBefore.queueConsumers.invocations + 1,
      },
      pricePerMillion: {
        SQS: round(perDelivery.sqsRequests * PRICES.sqsPerMillionRequests, 3),
        Lambda: round(perDelivery.lambdaInvocations * PRICES.lambdaPerMillionInvocations, 3),
        DynamoDB: round(
          perDelivery.dynamoWriteUnits * PRICES.dynamoPerMillionWriteUnits + perDelivery.dynamoReadUnits * PRICES.dynamoPerMillionReadUnits,
          3,
        ),
        'Step Functions': round(perDelivery.stateTransitions * PRICES.stepFunctionsPerMillionTransitions, 3),
      },
    };
  } finally {
    producer.destroy();
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  }
}

/** The section of docs/performance.md. */
export function renderWebhookSection(result: WebhookBenchResult): string {
  const per = result.perDelivery;
  const rows = Object.entries(per.dynamoByCommand)
    .map(([command, count]) => `${command} ${count}`)
    .join(', ');
  const total = sum(Object.values(result.pricePerMillion));
  return `## Webhook delivery

${result.events} \`message.created\` events are put on the webhook subscriber's queue (batches of 10, as the event topic delivers them) for one registration whose receiver, a local HTTP server, answers 204. The local queue consumer long-polls like Lambda's SQS event source and hands each batch to the webhook dispatcher; the first attempt is made right there. Latency is from the enqueue to the receiver's answer; AWS work is counted in the run (SQS requests and invocations by the local consumer, DynamoDB by SDK middleware on the handlers' client, state transitions by the local Step Functions interpreter).

| Figure | Value |
| --- | --- |
| Deliveries per second (2 pollers, one process) | ${result.deliveriesPerSecond} |
| Enqueue → receipt p50 / p99 / max, all ${result.events} enqueued at once (includes queueing behind the burst) | ${result.latencyMs.p50} / ${result.latencyMs.p99} / ${result.latencyMs.max} ms |
| Enqueue → receipt p50 / p99 / max at a steady ${PACED_RATE} events/s (${result.pacedLatencyMs.events} events) | ${result.pacedLatencyMs.p50} / ${result.pacedLatencyMs.p99} / ${result.pacedLatencyMs.max} ms |
| SQS requests per delivery (receive + delete, batched) | ${per.sqsRequests} |
| Lambda invocations per delivery | ${per.lambdaInvocations} |
| DynamoDB requests per delivery | ${per.dynamoRequests} (${rows}) |
| DynamoDB units per delivery | ${per.dynamoWriteUnits} WU, ${per.dynamoReadUnits} RU |
| Step Functions state transitions per delivery (first attempt succeeds) | ${per.stateTransitions} |
| A delivery that fails once, then succeeds | ${result.retried.executions} execution, ${result.retried.stateTransitions} state transitions |

Price per million deliveries whose first attempt succeeds, from the counts above at us-east-1 list prices (SQS $${PRICES.sqsPerMillionRequests}/M requests, Lambda $${PRICES.lambdaPerMillionInvocations}/M invocations without duration, DynamoDB on-demand $${PRICES.dynamoPerMillionWriteUnits}/M WRU and $${PRICES.dynamoPerMillionReadUnits}/M RRU, Step Functions Standard $${PRICES.stepFunctionsPerMillionTransitions}/M transitions): ${Object.entries(
    result.pricePerMillion,
  )
    .map(([service, price]) => `${service} $${price}`)
    .join(
      ', ',
    )}; **$${round(total, 2)} in all**. Zero state transitions on the success path is the design goal: Step Functions, at $25 per million transitions, is paid only by deliveries that need a retry.
`;
}
