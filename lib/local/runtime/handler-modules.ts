import type { Gateway } from '../gateway';
import type { SqsLocal } from '../sqs-local';
import { type ConnectionsTransportKind, transportKindFrom, useConnectionsTransport } from './connections-transport';
import { keyNamingSigner, type LocalCredentials } from './credentials';

/**
 * Sets up the shared modules the handlers load (after `applyToProcess`, before any handler): the
 * SDK clients' defaults, the settings check, the `@connections` path and the metric counters.
 */
export async function prepareHandlerModules(input: {
  readonly credentials: LocalCredentials;
  readonly sqs: SqsLocal;
  readonly gateway: Gateway;
  /** @default from the setting `LOCAL_CONNECTIONS_TRANSPORT`, else `direct` */
  readonly connectionsTransport: ConnectionsTransportKind | undefined;
  readonly settings: Readonly<Record<string, string | undefined>>;
  /** Summed here by metric name. */
  readonly metrics: Record<string, number>;
  /** Takes each EMF record once (the log subscriptions' stand-in). */
  readonly figures: { take(record: Readonly<Record<string, unknown>>): void };
}): Promise<void> {
  // Before any handler module builds its clients.
  const { sdkClientDefaults, sqsClientDefaults } = await import('#shared/aws-clients');
  sdkClientDefaults.signer = keyNamingSigner(input.credentials.accessKeyId);
  sqsClientDefaults.requestHandler = input.sqs.requestHandler;
  // Validate the settings now, so a bad one stops the start instead of the first request.
  await import('#shared/config');
  await useConnectionsTransport(input.connectionsTransport ?? transportKindFrom(input.settings), input.gateway, input.credentials);
  const { addMetricSink } = await import('#shared/metrics');
  let lastRecord: unknown;
  addMetricSink((name, value, record) => {
    input.metrics[name] = (input.metrics[name] ?? 0) + value;
    // The sink hears a record once per metric in it; the feed takes it once.
    if (record === lastRecord) return;
    lastRecord = record;
    input.figures.take(record);
  });
}
