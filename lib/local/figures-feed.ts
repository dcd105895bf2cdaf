import { gzipSync } from 'node:zlib';
import type { LogSubscriber } from '#wiring';
import type { HandlerHost } from './handlers';

/** What the feed has handed over: records and aggregator invocations (a test waits on `flush`). */
export interface FiguresFeedStats {
  readonly records: number;
  readonly invocations: number;
  readonly failures: number;
}

export interface FiguresFeed {
  /** Takes one EMF record as the metric sink receives it; the feed keeps those its subscriber's pattern would match. */
  take(record: Readonly<Record<string, unknown>>): void;
  /** Hands everything collected so far to the subscribers now. */
  flush(): Promise<void>;
  stats(): FiguresFeedStats;
  stop(): Promise<void>;
}

/**
 * The local stand-in of a CloudWatch Logs subscription: the records the functions write (through
 * the metric sink, since no log group exists on one machine) that a log subscriber's pattern
 * matches are handed to its handler every `flushMs`, as one `awslogs` event (gzip, base64) like
 * the one Lambda receives on AWS, so the same aggregator code runs in both worlds.
 */
export function startFiguresFeed(input: {
  readonly subscribers: readonly LogSubscriber[];
  readonly handlers: HandlerHost;
  readonly flushMs: number;
  readonly onError?: (subscriberId: string, error: unknown) => void;
}): FiguresFeed {
  const pending = new Map<string, string[]>(input.subscribers.map((subscriber) => [subscriber.id, []]));
  const counts = { records: 0, invocations: 0, failures: 0 };
  let sequence = 0;
  let running: Promise<void> = Promise.resolve();

  const deliver = async (subscriber: LogSubscriber, lines: string[]) => {
    const now = Date.now();
    const data = {
      messageType: 'DATA_MESSAGE',
      owner: '000000000000',
      logGroup: '/aws/lambda/local',
      logStream: 'local',
      subscriptionFilters: [subscriber.id],
      logEvents: lines.map((message) => ({ id: String(++sequence), timestamp: now, message })),
    };
    const event = { awslogs: { data: gzipSync(JSON.stringify(data)).toString('base64') } };
    counts.invocations++;
    try {
      await input.handlers.invoke(subscriber.handler, subscriber.id, event);
    } catch (error) {
      // CloudWatch Logs retries a failed invocation a few times, then drops the batch; so does this, at once.
      counts.failures++;
      input.onError?.(subscriber.id, error);
    }
  };

  const flushOnce = async () => {
    await Promise.all(
      input.subscribers.map((subscriber) => {
        const lines = pending.get(subscriber.id) ?? [];
        if (lines.length === 0) return undefined;
        pending.set(subscriber.id, []);
        return deliver(subscriber, lines);
      }),
    );
  };
  // Flushes run one after another, as one subscription's batches do.
  const flush = () => {
    running = running.then(flushOnce);
    return running;
  };
  const timer = setInterval(() => void flush(), input.flushMs);
  timer.unref();

  return {
    take(record) {
      for (const subscriber of input.subscribers) {
        if (record[subscriber.matches.key] !== subscriber.matches.value) continue;
        pending.get(subscriber.id)?.push(JSON.stringify(record));
        counts.records++;
      }
    },
    flush,
    stats: () => ({ ...counts }),
    async stop() {
      clearInterval(timer);
      await flush();
    },
  };
}
