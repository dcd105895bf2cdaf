import { ApiGatewayManagementApiClient } from '@aws-sdk/client-apigatewaymanagementapi';
import type { Gateway } from '../gateway';
import { inProcessRequestHandler } from '../in-process-handler';
import { managementResponder } from '../management-api';
import { LOCAL_REGION } from '../sqs-local';
import type { LocalCredentials } from './credentials';

export const connectionsTransportKinds = ['direct', 'sdk', 'http'] as const;
export type ConnectionsTransportKind = (typeof connectionsTransportKinds)[number];

export function transportKindFrom(settings: Readonly<Record<string, string | undefined>>): ConnectionsTransportKind {
  const kind = settings.LOCAL_CONNECTIONS_TRANSPORT || 'direct';
  if (!(connectionsTransportKinds as readonly string[]).includes(kind)) {
    throw new Error(`LOCAL_CONNECTIONS_TRANSPORT must be one of ${connectionsTransportKinds.join(', ')}, not ${kind}`);
  }
  return kind as ConnectionsTransportKind;
}

/** Points the handlers of this process at the gateway's `@connections` by the chosen path. */
export async function useConnectionsTransport(
  kind: ConnectionsTransportKind,
  gateway: Gateway,
  credentials: LocalCredentials,
): Promise<void> {
  // `http`: the handlers' own SDK client, over a socket to the gateway, as on AWS.
  if (kind === 'http') return;
  const shared = await import('#shared/gateway');
  if (kind === 'direct') return shared.useConnectionsTransport(gateway.directTransport);
  const client = new ApiGatewayManagementApiClient({
    endpoint: gateway.baseUrl,
    region: LOCAL_REGION,
    credentials,
    requestHandler: inProcessRequestHandler(managementResponder(gateway.manageRequest)),
  });
  shared.useConnectionsTransport(shared.sdkTransport(client));
}
