import { GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { projectPk, roomPk } from './keys';
import { roomKey } from './room';
import { storedSecret } from './stored-secret';
import { isConditionFailure, type TransactPart, transactWrite } from './transact';

/**
 * A bridge: one room linked to one channel of Slack, Discord or Matrix. The project's bridges share a
 * partition (the admin list is one Query); gsi1 lists a room's (the relay's one Query per bridged
 * message). The room item counts its bridges (`bridgeCount`), written in the same transaction as
 * the bridge, so the message pipeline, which reads the room anyway, knows whether a message needs
 * relaying without a request of its own.
 */
export const BRIDGE_PLATFORMS = ['slack', 'discord', 'matrix'] as const;
export type BridgePlatform = (typeof BRIDGE_PLATFORMS)[number];

export const bridgeItem = z.object({
  pk: z.string(),
  sk: z.string(),
  gsi1pk: z.string(),
  gsi1sk: z.string(),
  projectId: z.string(),
  bridgeId: z.string(),
  platform: z.enum(BRIDGE_PLATFORMS),
  roomId: z.string(),
  /** What may be shown: channel ids, the Discord public key, the homeserver URL, the Matrix room id. */
  settings: z.record(z.string(), z.string()),
  /** Signing secrets and tokens by field name, each sealed and bound to the bridge and the field. */
  secrets: z.record(z.string(), storedSecret),
  createdAt: z.string(),
  createdBy: z.string(),
  updatedAt: z.string(),
});
export type BridgeItem = z.infer<typeof bridgeItem>;
export type StoredBridgeSecret = z.infer<typeof storedSecret>;

export const bridgesPk = (projectId: string) => `${projectPk(projectId)}#BRIDGES`;
export const roomBridgesIndexKey = (projectId: string, roomId: string) => `${roomPk(projectId, roomId)}#BRIDGES`;
export const bridgeKey = (projectId: string, bridgeId: string) => ({ pk: bridgesPk(projectId), sk: `B#${bridgeId}` });
export const bridgeIndexKeys = (projectId: string, roomId: string, bridgeId: string) => ({
  gsi1pk: roomBridgesIndexKey(projectId, roomId),
  gsi1sk: `B#${bridgeId}`,
});

/** The room's count of bridges moves by `delta`; the room must exist. */
const roomBridgeCountPart = (projectId: string, roomId: string, delta: 1 | -1): TransactPart => ({
  Update: {
    TableName: tableName,
    Key: roomKey(projectId, roomId),
    UpdateExpression: 'ADD bridgeCount :delta',
    ConditionExpression: 'attribute_exists(pk)',
    ExpressionAttributeValues: { ':delta': delta },
  },
});

/** Stores a new bridge and counts it on its room; `false` when the room does not exist. */
export async function createBridge(item: BridgeItem): Promise<boolean> {
  try {
    await transactWrite([
      { Put: { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' } },
      roomBridgeCountPart(item.projectId, item.roomId, 1),
    ]);
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Replaces a bridge's settings and secrets (its room stays); `false` when it is gone. */
export async function replaceBridge(item: BridgeItem): Promise<boolean> {
  try {
    await db.send(
      new PutCommand({
        TableName: tableName,
        Item: item,
        ConditionExpression: 'attribute_exists(pk) AND roomId = :roomId',
        ExpressionAttributeValues: { ':roomId': item.roomId },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Removes a bridge and its count on the room; `false` when there was no such bridge. */
export async function deleteBridge(projectId: string, bridgeId: string, roomId: string): Promise<boolean> {
  try {
    await transactWrite([
      {
        Delete: {
          TableName: tableName,
          Key: bridgeKey(projectId, bridgeId),
          ConditionExpression: 'roomId = :roomId',
          ExpressionAttributeValues: { ':roomId': roomId },
        },
      },
      roomBridgeCountPart(projectId, roomId, -1),
    ]);
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

export async function findBridge(projectId: string, bridgeId: string, options: { consistent?: boolean } = {}) {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: bridgeKey(projectId, bridgeId), ConsistentRead: options.consistent ?? false }),
  );
  return Item ? bridgeItem.parse(Item) : undefined;
}

/** Every bridge of the project, oldest id order (one Query; a project has at most a few dozen). */
export async function listBridges(projectId: string): Promise<BridgeItem[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': bridgesPk(projectId) },
    }),
  );
  return Items.map((raw) => bridgeItem.parse(raw));
}

/** The bridges of one room (gsi1, eventually consistent). */
export async function listRoomBridges(projectId: string, roomId: string): Promise<BridgeItem[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': roomBridgesIndexKey(projectId, roomId) },
    }),
  );
  return Items.map((raw) => bridgeItem.parse(raw));
}
