/**
 * Webhook delivery: deliveries per second from the webhook subscriber's queue to a local receiver
 * answering 204, latency from enqueue to receipt, and the AWS work per delivery (SQS requests,
 * Lambda invocations, DynamoDB requests and units, Step Functions state transitions) counted in the
 * run. Runs on a runtime started with its consumers off (so earlier figures are not disturbed) and
 * a short `WEBHOOK_RETRY_TIME_SCALE`; it starts the consumers itself.
 */
import { randomUUID } from 'node:crypto';
import { SendMessageBatchCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { LocalStats } from '../lib/local/runtime';
import type { Bench, Context } from './harness';
import { recording } from './instrument';
import { countBy, createProject, latencySummary, localAws, PRICES, round, sleep, startWebhookReceiver, sum } from './util';

const EVENTS = 400;
const BATCH = 10;
const PACED_EVENTS = 100;
const PACED_RATE = 50;

async function measure({ service, log }: Context) {
  const { runtime, api } = service;
  let failNext = 0;
  const received = new Map<number, number>();
  const receiver = await startWebhookReceiver((event) => {
    if (failNext > 0) {
      failNext--;
      return 500;
    }
    received.set(event.payload.messageId, performance.now());
    return 204;
  });
  const producer = new SQSClient({ ...localAws(runtime.sqsEndpoint), useQueueUrlAsEndpoint: false });
  try {
    const project = await createProject(api, 'webhook-bench');
    await receiver.register(api, project.apiKey);
    runtime.startConsumers();
    // The webhook subscriber's own queue, as the event topic fills it (the domain events section covers the way there).
    const queueUrl = runtime.queueUrls.WebhookDispatcher as string;
    const sentAt = new Map<number, number>();
    const enqueue = async (from: number, count: number) => {
      for (let start = from; start < from + count; start += BATCH) {
        const seqs = Array.from({ length: Math.min(BATCH, from + count - start) }, (_, index) => start + index);
        const createdAt = new Date().toISOString();
        const entries = seqs.map((messageId, index) => ({
          Id: String(index),
          MessageBody: JSON.stringify({
            id: randomUUID(),
            type: 'message.created',
            projectId: project.projectId,
            payload: { roomId: 'bench', messageId, userId: 'bench', content: 'webhook bench', parent_id: null, attachments: [], createdAt },
            createdAt,
          }),
        }));
        for (const seq of seqs) sentAt.set(seq, performance.now());
        await producer.send(new SendMessageBatchCommand({ QueueUrl: queueUrl, Entries: entries }));
      }
    };
    const waitFor = async (count: number, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      while (received.size < count && Date.now() < deadline) await sleep(20);
      if (received.size < count) throw new Error(`webhook bench: ${received.size} of ${count} deliveries arrived`);
    };
    const latencies = () => [...received.entries()].map(([seq, at]) => at - (sentAt.get(seq) ?? at));
    const reset = () => {
      received.clear();
      sentAt.clear();
    };

    // Warm-up: handler modules, caches, JIT.
    await enqueue(0, 40);
    await waitFor(40, 30_000);
    reset();
    await sleep(300);

    const before = runtime.stats();
    const { seconds, calls } = await recording({ dynamo: service.clients.dynamo, sqs: service.clients.sqs }, async (recorder) => {
      const started = performance.now();
      await enqueue(1000, EVENTS);
      await waitFor(EVENTS, 60_000);
      const seconds = (Math.max(...received.values()) - started) / 1000;
      await sleep(1200);
      return { seconds, calls: recorder.dynamo };
    });
    const after = runtime.stats();
    const burst = latencySummary(latencies());
    const per = (count: number, digits = 2) => round(count / EVENTS, digits);
    const consumers = (stats: LocalStats) => stats.queueConsumers.nonEmptyReceives + stats.queueConsumers.deleteRequests;
    /** Per successful first-attempt delivery. */
    const perDelivery = {
      // The receives that carried the event and the deletes that acknowledged it; the way to the
      // queue (stream, publisher, topic) is in the domain events section.
      sqsRequests: per(consumers(after) - consumers(before), 3),
      lambdaInvocations: per(after.queueConsumers.invocations - before.queueConsumers.invocations, 3),
      dynamoRequests: per(calls.length),
      dynamoWriteUnits: per(sum(calls.map((call) => call.writeUnits))),
      dynamoReadUnits: per(sum(calls.map((call) => call.readUnits))),
      stateTransitions: per(after.stepFunctions.stateTransitions - before.stepFunctions.stateTransitions, 3),
      dynamoByCommand: countBy(
        calls.map((call) => call.command),
        EVENTS,
        2,
      ),
    };
    log(`  ${EVENTS} deliveries in ${round(seconds, 2)} s, p99 ${burst.p99} ms`);

    // Paced: one event every 20 ms, so each waits for no other.
    reset();
    for (let index = 0; index < PACED_EVENTS; index++) {
      await enqueue(10_000 + index, 1);
      await sleep(1000 / PACED_RATE);
    }
    await waitFor(PACED_EVENTS, 30_000);
    const paced = latencySummary(latencies());

    // One delivery that fails once: the retry path's cost.
    const retryBefore = runtime.stats();
    failNext = 1;
    await enqueue(5000, 1);
    await waitFor(1, 30_000);
    await sleep(500);
    const retryAfter = runtime.stats();
    const dollars = (units: number, price: number) => round(units * price, 3);
    return {
      events: EVENTS,
      seconds: round(seconds, 3),
      deliveriesPerSecond: round(EVENTS / seconds, 1),
      latencyMs: burst,
      /** The same path at a steady 50 events/s: latency without a backlog. */
      pacedLatencyMs: { events: PACED_EVENTS, ...paced },
      perDelivery,
      /** A delivery whose first attempt fails and second succeeds. */
      retried: {
        stateTransitions: retryAfter.stepFunctions.stateTransitions - retryBefore.stepFunctions.stateTransitions,
        executions: retryAfter.stepFunctions.executionsStarted - retryBefore.stepFunctions.executionsStarted,
        lambdaInvocations: retryAfter.queueConsumers.invocations - retryBefore.queueConsumers.invocations + 1,
      },
      /** US East list prices per million deliveries (first attempt succeeds), by service. */
      pricePerMillion: {
        SQS: dollars(perDelivery.sqsRequests, PRICES.sqsPerMillionRequests),
        Lambda: dollars(perDelivery.lambdaInvocations, PRICES.lambdaPerMillionInvocations),
        DynamoDB: round(
          perDelivery.dynamoWriteUnits * PRICES.dynamoPerMillionWriteUnits + perDelivery.dynamoReadUnits * PRICES.dynamoPerMillionReadUnits,
          3,
        ),
        'Step Functions': dollars(perDelivery.stateTransitions, PRICES.stepFunctionsPerMillionTransitions),
      },
    };
  } finally {
    producer.destroy();
    await receiver.close();
  }
}

type Webhooks = Awaited<ReturnType<typeof measure>>;

export const webhooks: Bench<Webhooks> = {
  id: 'webhooks',
  name: 'Webhooks',
  needs: 'service',
  run: measure,

  goals: (result) => [
    {
      id: 'webhook-success-transitions',
      name: 'Webhook delivery whose first attempt succeeds: Step Functions state transitions',
      target: '0',
      measured: String(result.perDelivery.stateTransitions),
      pass: result.perDelivery.stateTransitions === 0,
    },
  ],

  section(result) {
    const per = result.perDelivery;
    const byCommand = Object.entries(per.dynamoByCommand)
      .map(([command, count]) => `${command} ${count}`)
      .join(', ');
    const prices = Object.entries(result.pricePerMillion)
      .map(([name, price]) => `${name} $${price}`)
      .join(', ');
    const { p50, p99, max } = result.latencyMs;
    const paced = result.pacedLatencyMs;
    return `## Webhook delivery

${result.events} \`message.created\` events are put on the webhook subscriber's queue (batches of 10, as the event topic delivers them) for one registration whose receiver, a local HTTP server, answers 204. The local queue consumer long-polls like Lambda's SQS event source and hands each batch to the webhook dispatcher; the first attempt is made right there. Latency is from the enqueue to the receiver's answer; AWS work is counted in the run (SQS requests and invocations by the local consumer, DynamoDB by SDK middleware on the handlers' client, state transitions by the local Step Functions interpreter).

| Figure | Value |
| --- | --- |
| Deliveries per second (2 pollers, one process) | ${result.deliveriesPerSecond} |
| Enqueue → receipt p50 / p99 / max, all ${result.events} enqueued at once (includes queueing behind the burst) | ${p50} / ${p99} / ${max} ms |
| Enqueue → receipt p50 / p99 / max at a steady ${PACED_RATE} events/s (${paced.events} events) | ${paced.p50} / ${paced.p99} / ${paced.max} ms |
| SQS requests per delivery (receive + delete, batched) | ${per.sqsRequests} |
| Lambda invocations per delivery | ${per.lambdaInvocations} |
| DynamoDB requests per delivery | ${per.dynamoRequests} (${byCommand}) |
| DynamoDB units per delivery | ${per.dynamoWriteUnits} WU, ${per.dynamoReadUnits} RU |
| Step Functions state transitions per delivery (first attempt succeeds) | ${per.stateTransitions} |
| A delivery that fails once, then succeeds | ${result.retried.executions} execution, ${result.retried.stateTransitions} state transitions |

Price per million deliveries whose first attempt succeeds, from the counts above at us-east-1 list prices (SQS $${PRICES.sqsPerMillionRequests}/M requests, Lambda $${PRICES.lambdaPerMillionInvocations}/M invocations without duration, DynamoDB on-demand $${PRICES.dynamoPerMillionWriteUnits}/M WRU and $${PRICES.dynamoPerMillionReadUnits}/M RRU, Step Functions Standard $${PRICES.stepFunctionsPerMillionTransitions}/M transitions): ${prices}; **$${round(sum(Object.values(result.pricePerMillion)), 2)} in all**. Zero state transitions on the success path is the design goal: Step Functions, at $25 per million transitions, is paid only by deliveries that need a retry.`;
  },
};
