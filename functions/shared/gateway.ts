import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import { ApiGatewayManagementApiClient, DeleteConnectionCommand, PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { quietSdkLogger } from '#shared/aws-clients';
import { bound } from '#shared/bindings';
import { pusherEventOf } from '#shared/pusher-frames';
import { parseSubscriptionId, socketOf } from '#shared/pusher-protocol';

/**
 * How frames reach API Gateway's connections. A failure is an error named as the management API
 * names it (`GoneException` for a connection it no longer knows, `PayloadTooLargeException`,
 * `LimitExceededException`), whatever the transport, so callers handle one set of outcomes.
 */
export interface ConnectionsTransport {
  post(connectionId: string, data: Uint8Array): Promise<void>;
  delete(connectionId: string): Promise<void>;
  /**
   * One frame to many connections, each still its own post under the same rules. The SDK posts
   * them with bounded parallelism; the local runtime's direct transport in one loop.
   */
  postMany(connectionIds: readonly string[], data: Uint8Array): Promise<ManyPostOutcome>;
}

export interface ManyPostOutcome {
  readonly sent: number;
  /** Connections API Gateway no longer knows (410): the caller forgets them. */
  readonly gone: string[];
  /** Posts refused for another reason (throttled, too large, a network error), each skipped. */
  readonly failed: { readonly connectionId: string; readonly error: unknown }[];
}

/** Posts to at most this many connections at once per fan-out through the SDK. */
export const FAN_OUT_CONCURRENCY = 32;

/** The management API through the SDK: what runs on AWS, and locally when a setting asks for it. */
export function sdkTransport(client: ApiGatewayManagementApiClient): ConnectionsTransport {
  const post = async (connectionId: string, data: Uint8Array) => {
    await client.send(new PostToConnectionCommand({ ConnectionId: connectionId, Data: data }));
  };
  return {
    post,
    postMany: async (connectionIds, data) => {
      const outcome = { sent: 0, gone: [] as string[], failed: [] as { connectionId: string; error: unknown }[] };
      let next = 0;
      const worker = async () => {
        while (next < connectionIds.length) {
          const connectionId = connectionIds[next++] as string;
          try {
            await post(connectionId, data);
            outcome.sent++;
          } catch (error) {
            if (isGone(error)) outcome.gone.push(connectionId);
            else outcome.failed.push({ connectionId, error });
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(FAN_OUT_CONCURRENCY, connectionIds.length) }, worker));
      return outcome;
    },
    delete: async (connectionId) => {
      await client.send(new DeleteConnectionCommand({ ConnectionId: connectionId }));
    },
  };
}

let transport: ConnectionsTransport | undefined;

/** Built on first use: most functions never talk to connections. */
function connections(): ConnectionsTransport {
  transport ??= sdkTransport(
    new ApiGatewayManagementApiClient({
      endpoint: bound('connections:manage'),
      maxAttempts: 2,
      // Not `sdkClientDefaults`: this client's requests are signed for real, locally too (`http`).
      logger: quietSdkLogger,
      // Fan-out posts many frames at once; the SDK's default of 50 sockets would queue them.
      requestHandler: {
        httpAgent: new HttpAgent({ keepAlive: true, maxSockets: 256 }),
        httpsAgent: new HttpsAgent({ keepAlive: true, maxSockets: 256 }),
      },
    }),
  );
  return transport;
}

/**
 * Replaces the transport of this process. Only the local runtime calls it, before any handler
 * runs, to hand frames to its gateway's sockets instead of paying for an SDK call per frame that
 * AWS does not charge the service for in CPU.
 */
export function useConnectionsTransport(replacement: ConnectionsTransport): void {
  transport = replacement;
}

const isGone = (error: unknown) => (error as { name?: string } | null)?.name === 'GoneException';

export type PostOutcome = 'sent' | 'gone';

/**
 * A frame ready to post: serialised and UTF-8 encoded once, so a fan-out to many connections
 * encodes it once rather than once per connection.
 */
export const encodeFrame = (frame: unknown): Uint8Array => Buffer.from(typeof frame === 'string' ? frame : JSON.stringify(frame));

/**
 * Sends one frame (an object, or a frame already encoded by {@link encodeFrame}). `gone` means API
 * Gateway no longer knows the connection (410), so the caller deletes it.
 */
export async function postToConnection(connectionId: string, frame: unknown): Promise<PostOutcome> {
  const subscription = parseSubscriptionId(connectionId);
  if (subscription) {
    const event = pusherEventOf(
      subscription.channel,
      frame instanceof Uint8Array ? JSON.parse(Buffer.from(frame).toString('utf8')) : frame,
    );
    // A frame the protocol has no counterpart for is delivered by being left out.
    if (event === undefined) return 'sent';
    return postToConnection(subscription.connectionId, event);
  }
  try {
    await connections().post(connectionId, frame instanceof Uint8Array ? frame : encodeFrame(frame));
    return 'sent';
  } catch (error) {
    if (isGone(error)) return 'gone';
    throw error;
  }
}

/**
 * Sends one frame to many connections (see {@link ConnectionsTransport.postMany}). Pusher
 * subscriptions among them get the frame in the protocol's form, translated once per channel and
 * posted to their sockets; a gone socket reports each of its subscriptions gone. `frame` is the
 * object `data` encodes, when the caller has it (it spares the translation a parse).
 */
export async function postToConnections(connectionIds: readonly string[], data: Uint8Array, frame?: unknown): Promise<ManyPostOutcome> {
  const native: string[] = [];
  const byChannel = new Map<string, { socket: string; id: string }[]>();
  for (const id of connectionIds) {
    const subscription = parseSubscriptionId(id);
    if (!subscription) {
      native.push(id);
      continue;
    }
    const group = byChannel.get(subscription.channel);
    if (group) group.push({ socket: subscription.connectionId, id });
    else byChannel.set(subscription.channel, [{ socket: subscription.connectionId, id }]);
  }
  if (byChannel.size === 0) return connections().postMany(native, data);
  // The caller's object when it passed one; else (a frame encoded beforehand) the bytes read back.
  const decoded: unknown =
    typeof frame === 'object' && frame !== null && !(frame instanceof Uint8Array) ? frame : JSON.parse(Buffer.from(data).toString('utf8'));
  const outcomes = await Promise.all([
    connections().postMany(native, data),
    ...[...byChannel].map(async ([channel, subscriptions]): Promise<ManyPostOutcome> => {
      const event = pusherEventOf(channel, decoded);
      if (event === undefined) return { sent: subscriptions.length, gone: [], failed: [] };
      const outcome = await connections().postMany(
        subscriptions.map((subscription) => subscription.socket),
        encodeFrame(event),
      );
      const idOf = new Map(subscriptions.map((subscription) => [subscription.socket, subscription.id]));
      return {
        sent: outcome.sent,
        gone: outcome.gone.map((socket) => idOf.get(socket) as string),
        failed: outcome.failed.map(({ connectionId, error }) => ({ connectionId: idOf.get(connectionId) as string, error })),
      };
    }),
  ]);
  return {
    sent: outcomes.reduce((sum, outcome) => sum + outcome.sent, 0),
    gone: outcomes.flatMap((outcome) => outcome.gone),
    failed: outcomes.flatMap((outcome) => outcome.failed),
  };
}

/** Closes a connection; for a Pusher subscription, its socket (the protocol has no server-side unsubscribe). */
export async function closeConnection(connectionId: string): Promise<void> {
  try {
    await connections().delete(socketOf(connectionId));
  } catch (error) {
    if (!isGone(error)) throw error;
  }
}
