import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { ApiGatewayManagementApiClient, DeleteConnectionCommand, PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { bound } from '#shared/bindings';

let client: ApiGatewayManagementApiClient | undefined;

/** Built on first use: most functions never talk to connections. */
function managementClient(): ApiGatewayManagementApiClient {
  client ??= new ApiGatewayManagementApiClient({
    endpoint: bound('connections:manage'),
    maxAttempts: 2,
    // Fan-out posts many frames at once; the SDK's default of 50 sockets would queue them.
    requestHandler: {
      httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 256 }),
      httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: 256 }),
    },
  });
  return client;
}

export type PostOutcome = 'sent' | 'gone';

/**
 * Sends one frame (an object, or JSON already serialised by a fan-out). `gone` means API Gateway
 * no longer knows the connection (410), so the caller deletes it.
 */
export async function postToConnection(connectionId: string, frame: unknown): Promise<PostOutcome> {
  const data = typeof frame === 'string' ? frame : JSON.stringify(frame);
  try {
    await managementClient().send(new PostToConnectionCommand({ ConnectionId: connectionId, Data: Buffer.from(data) }));
    return 'sent';
  } catch (error) {
    if ((error as { name?: string }).name === 'GoneException') return 'gone';
    throw error;
  }
}

export async function closeConnection(connectionId: string): Promise<void> {
  try {
    await managementClient().send(new DeleteConnectionCommand({ ConnectionId: connectionId }));
  } catch (error) {
    if ((error as { name?: string }).name !== 'GoneException') throw error;
  }
}
