/**
 * AWS work per realtime frame on the service, counted while frames go one at a time through the
 * real path (WebSocket `$default` → pipeline → queue → fan-out → `@connections`), each waited for
 * until every receiver has it: DynamoDB requests and capacity units (SDK middleware on the
 * handlers' client, bench/instrument.ts), SQS requests (the same middleware on the handlers' SQS
 * client, plus the local queue consumers' receives and deletes), Lambda invocations and
 * `PostToConnection` calls (the local gateway's management API counters).
 */
import { defaultMemorySizeMb } from '../../lib/constructs/chat-function';
import type { LocalRuntime } from '../../lib/local/runtime';
import type { Recorder } from '../instrument';
import { countBy, median, PRICES, round, sleep, sum } from '../util';
import type { Receivers } from './measure';
import type { Workload } from './receivers';

/** Warm-up frames before the counted ones. */
export const COST_WARMUP = 3;

/**
 * After the receivers left: waits until the gateway holds no connection (or no more than `connections`, those of another leg still open), no handler is running,
 * and neither a management call nor a DynamoDB request (`activity`, a running count) happened for
 * a while, so the `$disconnect` work and the departures' presence frames do not spill into
 * whatever runs next (or into the runtime's stop, where they fail).
 */
export async function waitForSilence(runtime: LocalRuntime, activity: () => number, maxMs: number, connections = 0): Promise<boolean> {
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
    // Handlers still running (a burst of `$disconnect`s waiting on DynamoDB Local) are not silence.
    if (runtime.gateway.connectionCount() <= connections && runtime.stats().lambda.running === 0 && performance.now() - lastChange >= 750)
      return true;
  }
  return false;
}

/**
 * Sends `frames` frames of one workload one at a time and divides what was counted by their
 * number. The receivers must already be connected and quiet; `recorder` must be attached to the
 * handlers' clients.
 */
export async function measureCost(
  runtime: LocalRuntime,
  recorder: Recorder,
  receivers: Receivers,
  n: number,
  workload: Workload,
  frames: number,
  nextId: () => number,
) {
  // One frame, waited for until every receiver has it (and the sender its ack), or 3 s.
  const probe = () => receivers.call('run', { id: nextId(), workload, rate: 1000, count: 1, drainMs: 3000, acks: workload === 'message' });
  const quiet = () => receivers.call('quiet', 300, 5000);
  for (let i = 0; i < COST_WARMUP; i++) await probe();
  await quiet();
  const before = runtime.stats().queueConsumers;
  const lambdaBefore = runtime.stats().lambda;
  const postsBefore = runtime.gateway.managementStats();
  const start = recorder.mark();
  const perFrameRequests: number[] = [];
  let complete = 0;
  for (let i = 0; i < frames; i++) {
    const frameStart = recorder.mark();
    const result = await probe();
    if (result.delivered >= result.expected) complete++;
    perFrameRequests.push(recorder.since(frameStart).dynamo.length);
  }
  // The consumer deletes a batch after its handler returned, so after the last delivery.
  await sleep(400);
  await quiet();
  const after = runtime.stats().queueConsumers;
  const lambdaAfter = runtime.stats().lambda;
  const postsAfter = runtime.gateway.managementStats();
  const { dynamo, sqs } = recorder.since(start);
  const per = (value: number) => round(value / frames, 3);
  const lambdaInvocations = per(lambdaAfter.invocations - lambdaBefore.invocations);
  /** Billed duration at ChatFunction's memory, from the handlers' wall time here (a local estimate of AWS's). */
  const lambdaGbSeconds = per(((lambdaAfter.durationMs - lambdaBefore.durationMs) / 1000) * (defaultMemorySizeMb / 1024));
  const writeUnits = per(sum(dynamo.map((call) => call.writeUnits)));
  const readUnits = per(sum(dynamo.map((call) => call.readUnits)));
  const snsPublishes = per(sqs.filter((call) => call.command.startsWith('SNS:')).length);
  /** Per frame: requests by the handlers (SendMessageBatch, ...) and by the queue consumers (non-empty receives + deletes). */
  const sqsRequests = {
    handlers: per(sqs.filter((call) => !call.command.startsWith('SNS:')).length),
    consumers: per(after.nonEmptyReceives - before.nonEmptyReceives + (after.deleteRequests - before.deleteRequests)),
  };
  const postToConnection = per(postsAfter.posts - postsBefore.posts);
  /** Per frame: the inbound frame plus every `PostToConnection` (each under 32 KB). */
  const apiGatewayMessages = round(1 + postToConnection, 3);
  /** US dollars per million frames, by service. */
  const pricePerMillion = {
    DynamoDB: round(writeUnits * PRICES.dynamoPerMillionWriteUnits + readUnits * PRICES.dynamoPerMillionReadUnits, 3),
    'SQS + SNS': round(
      (sqsRequests.handlers + sqsRequests.consumers) * PRICES.sqsPerMillionRequests + snsPublishes * PRICES.snsPerMillionPublishes,
      3,
    ),
    'API Gateway': round(apiGatewayMessages * PRICES.apiGatewayWebSocketPerMillionMessages, 3),
    Lambda: round(lambdaInvocations * PRICES.lambdaPerMillionInvocations + lambdaGbSeconds * 1e6 * PRICES.lambdaPerGbSecondArm, 3),
  };
  return {
    workload,
    receivers: n,
    frames,
    /** Frames whose every delivery (and, for messages, the ack) came within the probe timeout. */
    complete,
    dynamo: {
      requestsMedian: median(perFrameRequests),
      requestsMean: per(dynamo.length),
      writeUnits,
      readUnits,
      byCommand: countBy(
        dynamo.map((call) => call.command),
        frames,
      ),
    },
    sqs: sqsRequests,
    snsPublishes,
    /** Every handler invocation: `$default`, queue consumers, the stream's event publisher. */
    lambdaInvocations,
    lambdaGbSeconds,
    postToConnection,
    /** Posts the gateway answered 410 (connection gone). */
    postToConnectionGone: per(postsAfter.gone - postsBefore.gone),
    apiGatewayMessages,
    pricePerMillion,
    pricePerMillionTotal: round(sum(Object.values(pricePerMillion)), 2),
  };
}

export type CostRow = Awaited<ReturnType<typeof measureCost>>;
