import { join } from 'node:path';
import { type StreamConsumer, streamConsumers } from '#wiring';
import type { HandlerHost } from '../handlers';
import { type QueueConsumers, startQueueConsumers } from '../queue-consumers';
import type { SqsLocal } from '../sqs-local';
import { type StreamConsumerDefinition, type StreamPoller, startStreamPoller } from '../stream-poller';
import { keyNamingSigner } from './credentials';

/** The consumers started so far; each launch adds its part. */
export interface RunningConsumers {
  readonly queues: QueueConsumers[];
  readonly streams: StreamPoller[];
}

export interface ConsumerSources {
  readonly sqs: SqsLocal;
  readonly dynamoEndpoint: string;
  readonly tableName: string;
  readonly accessKeyId: string;
  readonly handlers: HandlerHost;
  /** Where the stream positions are kept; none in memory. */
  readonly dataDir: string | undefined;
  /** The run's settings: a stream consumer's `batchWindow` names one. */
  readonly settings: Readonly<Record<string, string | undefined>>;
}

interface Selection {
  readonly only?: readonly string[];
  readonly except?: readonly string[];
}

/**
 * Starts the consumers `chosen` names (all for `true`, the listed ids, or none) and gives back
 * `startConsumers`, which starts the rest once, whenever it is called.
 */
export async function startChosenConsumers(
  chosen: boolean | readonly string[],
  sources: ConsumerSources,
  running: RunningConsumers,
): Promise<() => void> {
  const early = Array.isArray(chosen) ? chosen : [];
  if (early.length > 0) await launch(sources, { only: early }, running);
  let rest: Promise<void> | undefined;
  const startConsumers = () => {
    rest ??= launch(sources, { except: early }, running);
  };
  if (chosen === true) {
    startConsumers();
    await rest;
  }
  return startConsumers;
}

/** A stream consumer with a `batchWindow` holds its records for as long as its setting names (or its default). */
function withBatchWindow(consumer: StreamConsumer, settings: ConsumerSources['settings']): StreamConsumerDefinition {
  if (!consumer.batchWindow) return consumer;
  const { setting, defaultMs } = consumer.batchWindow;
  return { ...consumer, batchWindowMs: Number(settings[setting] ?? defaultMs) };
}

/** The queue receivers and the stream poller of the selected consumers. */
async function launch(sources: ConsumerSources, selection: Selection, running: RunningConsumers): Promise<void> {
  const picked = (id: string) => (!selection.only || selection.only.includes(id)) && !selection.except?.includes(id);
  running.queues.push(
    startQueueConsumers({
      sqsEndpoint: sources.sqs.endpoint,
      requestHandler: sources.sqs.requestHandler,
      signer: keyNamingSigner(sources.accessKeyId),
      queueUrls: sources.sqs.queueUrls,
      handlers: sources.handlers,
      ...selection,
    }),
  );
  const streamed = streamConsumers.filter((consumer) => picked(consumer.id));
  if (streamed.length === 0) return;
  running.streams.push(
    await startStreamPoller({
      dynamoEndpoint: sources.dynamoEndpoint,
      tableName: sources.tableName,
      consumers: streamed.map((consumer) => withBatchWindow(consumer, sources.settings)),
      handlers: sources.handlers,
      checkpointFile: sources.dataDir ? join(sources.dataDir, 'stream-checkpoints.json') : undefined,
    }),
  );
}
