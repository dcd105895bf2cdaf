import { DeleteCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { putAll } from '#shared/db/batch';
import { db, tableName } from '#shared/db/client';
import {
  CONNECTION_TTL_SECONDS,
  type ConnectionItem,
  connectionItem,
  connectionLookupKey,
  roomConnectionKey,
  roomConnectionsPk,
} from '#shared/db/connection';
import { closeConnection, postToConnection } from '#shared/gateway';
import { logger } from '#shared/logger';

/** Posts to at most this many connections at once per fan-out. */
export const FAN_OUT_CONCURRENCY = 32;

export async function saveConnection(input: {
  projectId: string;
  roomId: string;
  userId: string;
  roles: string[];
  connectionId: string;
}): Promise<void> {
  const base = { ...input, connectedAt: new Date().toISOString(), ttl: Math.floor(Date.now() / 1000) + CONNECTION_TTL_SECONDS };
  await putAll([
    { ...roomConnectionKey(input.projectId, input.roomId, input.connectionId), ...base },
    { ...connectionLookupKey(input.connectionId), ...base },
  ]);
}

export async function findConnection(connectionId: string): Promise<ConnectionItem | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: connectionLookupKey(connectionId) }));
  return Item ? connectionItem.parse(Item) : undefined;
}

export async function deleteConnection(connection: Pick<ConnectionItem, 'projectId' | 'roomId' | 'connectionId'>): Promise<void> {
  await Promise.all([
    db.send(
      new DeleteCommand({ TableName: tableName, Key: roomConnectionKey(connection.projectId, connection.roomId, connection.connectionId) }),
    ),
    db.send(new DeleteCommand({ TableName: tableName, Key: connectionLookupKey(connection.connectionId) })),
  ]);
}

/** Every live connection of a room: one Query (paged past 1 MB). Expired-but-unswept items are skipped. */
export async function roomConnections(projectId: string, roomId: string): Promise<ConnectionItem[]> {
  const nowSeconds = Math.floor(Date.now() / 1000);
  const connections: ConnectionItem[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await db.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': roomConnectionsPk(projectId, roomId) },
        ExclusiveStartKey: startKey,
      }),
    );
    for (const raw of page.Items ?? []) {
      const connection = connectionItem.parse(raw);
      if (connection.ttl > nowSeconds) connections.push(connection);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey);
  return connections;
}

/**
 * Closes a user's connections to one room (on AWS through the management API) and forgets them, so
 * a removed member stops receiving the room at once.
 */
export async function disconnectFromRoom(projectId: string, roomId: string, userId: string): Promise<number> {
  const own = (await roomConnections(projectId, roomId)).filter((connection) => connection.userId === userId);
  await Promise.all(own.map(async (connection) => Promise.all([closeConnection(connection.connectionId), deleteConnection(connection)])));
  return own.length;
}

/**
 * Sends a frame to every connection of a room with bounded parallelism. A connection API Gateway
 * reports gone (410) is deleted on the spot, since `$disconnect` is only best effort.
 */
export async function broadcastToRoom(
  projectId: string,
  roomId: string,
  frame: unknown,
  options: { excludeConnectionId?: string } = {},
): Promise<{ sent: number; gone: number }> {
  const targets = (await roomConnections(projectId, roomId)).filter((c) => c.connectionId !== options.excludeConnectionId);
  let sent = 0;
  let gone = 0;
  let next = 0;
  const worker = async () => {
    while (next < targets.length) {
      const connection = targets[next++] as ConnectionItem;
      try {
        if ((await postToConnection(connection.connectionId, frame)) === 'sent') sent++;
        else {
          gone++;
          await deleteConnection(connection);
        }
      } catch (error) {
        logger.warn('post to connection failed', { connectionId: connection.connectionId, error: error as Error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(FAN_OUT_CONCURRENCY, targets.length) }, worker));
  return { sent, gone };
}
