import type { Gateway } from '../gateway';
import type { HandlerHost, HandlerStats } from '../handlers';
import type { ManagementStats } from '../management-api';
import type { QueueConsumerStats } from '../queue-consumers';
import type { StepFunctionsStats } from '../step-functions';
import type { StreamPollerStats } from '../stream-poller';
import type { RunningConsumers } from './consumers';
import type { StandIns } from './stand-ins';

export interface LocalStats {
  readonly metrics: Readonly<Record<string, number>>;
  readonly stepFunctions: StepFunctionsStats;
  /** Zeros until the consumers start. */
  readonly queueConsumers: QueueConsumerStats;
  readonly stream: StreamPollerStats;
  /** `@connections` calls: what API Gateway would bill as WebSocket messages sent. */
  readonly connections: ManagementStats;
  /** Every handler invocation and its wall time (Lambda's `Invocations` and `Duration`), and invocations per function. */
  readonly lambda: HandlerStats;
}

const zeroQueueStats: QueueConsumerStats = { receiveRequests: 0, nonEmptyReceives: 0, deleteRequests: 0, invocations: 0, messages: 0 };
const zeroStreamStats: StreamPollerStats = {
  getRecordsRequests: 0,
  invocations: 0,
  recordsDelivered: 0,
  recordsFilteredOut: 0,
  retries: 0,
};
const zeroConnectionStats: ManagementStats = { posts: 0, gone: 0, deletes: 0, throttled: 0 };

function sum<T extends object>(parts: readonly (T | undefined)[], zero: T): T {
  const total = { ...zero } as Record<string, number>;
  for (const part of parts) {
    if (!part) continue;
    for (const [key, value] of Object.entries(part)) total[key] = (total[key] ?? 0) + (value as number);
  }
  return total as T;
}

/** The counters of every running part, as one snapshot: each launch of consumers adds to the sums. */
export function localStats(sources: {
  readonly metrics: Readonly<Record<string, number>>;
  readonly standIns: StandIns;
  readonly consumers: RunningConsumers;
  readonly gateway: Gateway | undefined;
  readonly handlers: HandlerHost;
}): LocalStats {
  return {
    metrics: { ...sources.metrics },
    stepFunctions: sources.standIns.stepFunctions.stats(),
    queueConsumers: sum(
      sources.consumers.queues.map((consumers) => consumers.stats()),
      zeroQueueStats,
    ),
    stream: sum(
      sources.consumers.streams.map((poller) => poller.stats()),
      zeroStreamStats,
    ),
    connections: sources.gateway?.managementStats() ?? zeroConnectionStats,
    lambda: sources.handlers.stats(),
  };
}
