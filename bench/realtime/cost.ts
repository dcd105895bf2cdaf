/**
 * AWS work per realtime frame on the service, counted while frames go one at a time through the
 * real path (WebSocket `$default` → pipeline → queue → fan-out → `@connections`), each waited for
 * until every receiver has it: DynamoDB requests and capacity units (SDK middleware on the
 * handlers' client, bench/instrument.ts), SQS requests (the same middleware on the handlers' SQS
 * client, plus the local queue consumers' receives and deletes), Lambda invocations and
 * `PostToConnection` calls (the local gateway's management API counters).
 */
import type { LocalRuntime } from '../../lib/local/runtime';
import type { Recorder } from '../instrument';
import { median, round, sleep, sum } from '../stats';
import { PRICES as BASE_PRICES } from '../webhooks';
import type { Workload } from './protocol';
import type { ReceiversProcess } from './receivers-process';

/** AWS list prices, us-east-1, per million units. */
export const PRICES = {
  ...BASE_PRICES,
  /** API Gateway WebSocket: per million messages (sent or received), each up to 32 KB. */
  apiGatewayWebSocketPerMillionMessages: 1.0,
} as const;

export interface CostRow {
  readonly workload: Workload;
  readonly receivers: number;
  /** Frames sent and waited for, one at a time. */
  readonly frames: number;
  /** Frames whose every delivery (and, for messages, the ack) came within the probe timeout. */
  readonly complete: number;
  readonly dynamo: {
    readonly requestsMedian: number;
    readonly requestsMean: number;
    readonly writeUnits: number;
    readonly readUnits: number;
    readonly byCommand: Readonly<Record<string, number>>;
  };
  /** Per frame: requests by the handlers (SendMessageBatch, ...) and by the queue consumers (non-empty receives + deletes). */
  readonly sqs: { readonly handlers: number; readonly consumers: number };
  /** Per frame: `$default` (1) plus queue-consumer invocations. */
  readonly lambdaInvocations: number;
  readonly postToConnection: number;
  /** Per frame: posts the gateway answered 410 (connection gone). */
  readonly postToConnectionGone: number;
  /** Per frame: the inbound frame plus every `PostToConnection` (each under 32 KB). */
  readonly apiGatewayMessages: number;
  /** US dollars per million frames, by service. */
  readonly pricePerMillion: Readonly<Record<string, number>>;
  readonly pricePerMillionTotal: number;
}

/**
 * After the receivers left: waits until the gateway holds no connection and neither a management
 * call nor a DynamoDB request (`activity`, a running count) happened for a while, so the
 * `$disconnect` work and the departures' presence frames do not spill into whatever runs next (or
 * into the runtime's stop, where they fail).
 */
export async function waitForSilence(runtime: LocalRuntime, activity: () => number, maxMs: number): Promise<boolean> {
  const started = performance.now();
  const seen = () => runtime.gateway.managementStats().posts + activity();
  let last = seen();
  let lastChange = started;
  while (performance.now() - started < maxMs) {
    await sleep(50);
    const now = seen();
    if (now !== last) {
      last = now;
      lastChange = performance.now();
    }
    if (runtime.gateway.connectionCount() === 0 && performance.now() - lastChange >= 750) return true;
  }
  return false;
}

const shortName = (command: string) => command.replace(/Command$/, '');

/**
 * Sends `frames` frames of one workload one at a time and divides what was counted by their
 * number. The receivers must already be connected and quiet; `recorder` must be attached to the
 * handlers' clients.
 */
export async function measureCost(options: {
  readonly runtime: LocalRuntime;
  readonly recorder: Recorder;
  readonly receivers: ReceiversProcess;
  readonly receiverCount: number;
  readonly workload: Workload;
  readonly frames: number;
  readonly warmup: number;
  readonly probeTimeoutMs: number;
  readonly nextId: () => number;
}): Promise<CostRow> {
  const { runtime, recorder, receivers, workload, frames } = options;
  for (let i = 0; i < options.warmup; i++) await receivers.probe(options.nextId(), workload, options.probeTimeoutMs);
  await receivers.quiet(300, 5000);
  {
    const before = runtime.stats().queueConsumers;
    const postsBefore = runtime.gateway.managementStats();
    const mark = recorder.mark();
    const perFrameRequests: number[] = [];
    let complete = 0;
    for (let i = 0; i < frames; i++) {
      const frameMark = recorder.mark();
      const probe = await receivers.probe(options.nextId(), workload, options.probeTimeoutMs);
      if (probe.delivered >= probe.expected) complete++;
      perFrameRequests.push(recorder.since(frameMark).dynamo.length);
    }
    // The consumer deletes a batch after its handler returned, so after the last delivery.
    await sleep(400);
    await receivers.quiet(300, 5000);
    const after = runtime.stats().queueConsumers;
    const { dynamo, sqs } = recorder.since(mark);
    const byCommand: Record<string, number> = {};
    for (const call of dynamo) byCommand[shortName(call.command)] = (byCommand[shortName(call.command)] ?? 0) + 1;
    const per = (value: number) => round(value / frames, 3);
    const consumerSqs = after.nonEmptyReceives - before.nonEmptyReceives + (after.deleteRequests - before.deleteRequests);
    const postsAfter = runtime.gateway.managementStats();
    const postCount = postsAfter.posts - postsBefore.posts;
    const lambdaInvocations = per(frames + (after.invocations - before.invocations));
    const writeUnits = per(sum(dynamo.map((call) => call.writeUnits)));
    const readUnits = per(sum(dynamo.map((call) => call.readUnits)));
    const sqsHandlers = per(sqs.length);
    const sqsConsumers = per(consumerSqs);
    const postToConnection = per(postCount);
    const postToConnectionGone = per(postsAfter.gone - postsBefore.gone);
    const apiGatewayMessages = round(1 + postToConnection, 3);
    const pricePerMillion = {
      DynamoDB: round(writeUnits * PRICES.dynamoPerMillionWriteUnits + readUnits * PRICES.dynamoPerMillionReadUnits, 3),
      SQS: round((sqsHandlers + sqsConsumers) * PRICES.sqsPerMillionRequests, 3),
      'API Gateway': round(apiGatewayMessages * PRICES.apiGatewayWebSocketPerMillionMessages, 3),
      Lambda: round(lambdaInvocations * PRICES.lambdaPerMillionInvocations, 3),
    };
    return {
      workload,
      receivers: options.receiverCount,
      frames,
      complete,
      dynamo: {
        requestsMedian: median(perFrameRequests),
        requestsMean: per(dynamo.length),
        writeUnits,
        readUnits,
        byCommand: Object.fromEntries(Object.entries(byCommand).map(([command, count]) => [command, per(count)])),
      },
      sqs: { handlers: sqsHandlers, consumers: sqsConsumers },
      lambdaInvocations,
      postToConnection,
      postToConnectionGone,
      apiGatewayMessages,
      pricePerMillion,
      pricePerMillionTotal: round(sum(Object.values(pricePerMillion)), 2),
    };
  }
}
