import { GetCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { projectPk } from './keys';
import { storedSecret } from './stored-secret';
import { isConditionFailure, type TransactPart, transactWrite } from './transact';

/**
 * A project's Pusher app: the app id, key and secret that Pusher clients and server libraries are
 * configured with. Three items hold the same record: the project's (`GET /admin/pusher-app`,
 * `/auth/channel`), one under the key (a Pusher socket names only the key: `/app/<key>`) and one
 * under the app id (the trigger API names only the app id: `/apps/<appId>/events`), so each
 * reader resolves the app with one GetItem and the secret travels with it. The three are written
 * in one transaction; key and app id hold no `#`, `|` or space, so they cannot reach another
 * entity's partition.
 */

export const pusherAppItem = z.object({
  pk: z.string(),
  sk: z.literal('PUSHER_APP'),
  projectId: z.string(),
  appId: z.string(),
  key: z.string(),
  /** The secret, sealed for the project and the app id (purpose `pusher-secret`). */
  sealedSecret: storedSecret,
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type PusherAppItem = z.infer<typeof pusherAppItem>;

/** The record the three items share. */
export type PusherAppRecord = Omit<PusherAppItem, 'pk' | 'sk'>;

const SK = 'PUSHER_APP' as const;
export const projectPusherAppKey = (projectId: string) => ({ pk: projectPk(projectId), sk: SK });
export const pusherKeyLookupKey = (key: string) => ({ pk: `PUSHERKEY#${key}`, sk: SK });
export const pusherAppIdLookupKey = (appId: string) => ({ pk: `PUSHERAPP#${appId}`, sk: SK });

async function read(key: { pk: string; sk: string }, consistent = false): Promise<PusherAppItem | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: consistent }));
  return Item ? pusherAppItem.parse(Item) : undefined;
}

export const findProjectPusherAppItem = (projectId: string, options: { consistent?: boolean } = {}) =>
  read(projectPusherAppKey(projectId), options.consistent);
export const findPusherAppItemByKey = (key: string) => read(pusherKeyLookupKey(key));
export const findPusherAppItemById = (appId: string) => read(pusherAppIdLookupKey(appId));

/**
 * Writes the app's three items in one transaction, in place of `was` (the project's app as read,
 * or `undefined` for a first one): the old key's item goes, so the old key stops resolving when the
 * transaction commits. `false` when another write came first (the project's item is not `was`
 * any more), or when the new key or a new app id is taken already.
 */
export async function putPusherApp(record: PusherAppRecord, was: PusherAppRecord | undefined): Promise<boolean> {
  const projectKey = projectPusherAppKey(record.projectId);
  const parts: TransactPart[] = [
    {
      Put: {
        TableName: tableName,
        Item: { ...projectKey, ...record },
        ...(was
          ? {
              ConditionExpression: '#key = :was',
              ExpressionAttributeNames: { '#key': 'key' },
              ExpressionAttributeValues: { ':was': was.key },
            }
          : { ConditionExpression: 'attribute_not_exists(pk)' }),
      },
    },
    // A key is never reused: a conditional put cannot take over another app's key.
    {
      Put: {
        TableName: tableName,
        Item: { ...pusherKeyLookupKey(record.key), ...record },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: tableName,
        Item: { ...pusherAppIdLookupKey(record.appId), ...record },
        // The app id item is the project's own (a rotation) or new.
        ConditionExpression: 'attribute_not_exists(pk) OR projectId = :projectId',
        ExpressionAttributeValues: { ':projectId': record.projectId },
      },
    },
  ];
  if (was && was.key !== record.key) parts.push({ Delete: { TableName: tableName, Key: pusherKeyLookupKey(was.key) } });
  try {
    await transactWrite(parts);
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}
