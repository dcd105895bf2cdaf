import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import { projectPk } from './keys';
import { failedConditionParts, isConditionFailure, transactWrite } from './transact';

/**
 * The open streams (SSE responses) of a project and of each of its users, as leases: a string set
 * `leases` of `"<expiresAtMs> <streamId>"` entries per holder (`ADD` and `DELETE` change a set
 * atomically, and `size()` in a condition counts it). A stream takes one lease in its user's item
 * and one in the project's, in one transaction, each conditional on the count being under its cap;
 * it gives both back when it ends. A lease that was never given back (the function crashed) expires
 * and is swept out by the next stream refused for lack of room. `ttl` forgets an item once its
 * newest lease has expired.
 */
export const STREAM_LEASES_ATTRIBUTE = 'leases';

const streamLeasesPk = (projectId: string) => `${projectPk(projectId)}#STREAMS`;

export const projectStreamLeasesKey = (projectId: string) => ({ pk: streamLeasesPk(projectId), sk: 'PROJECT' });
export const userStreamLeasesKey = (projectId: string, userId: string) => ({ pk: streamLeasesPk(projectId), sk: `U#${userId}` });

export interface StreamLease {
  readonly streamId: string;
  /** Epoch ms. */
  readonly expiresAt: number;
}

/** Stream ids are UUIDs (no space); the entry is rebuilt from the lease to give it back, so its form must never change. */
export const streamLeaseEntry = (lease: StreamLease) => `${lease.expiresAt} ${lease.streamId}`;

function parseEntry(entry: string): (StreamLease & { entry: string }) | undefined {
  const [expiresAt, streamId] = entry.split(' ');
  if (!expiresAt || !streamId || !/^\d+$/.test(expiresAt)) return undefined;
  return { streamId, expiresAt: Number(expiresAt), entry };
}

export type StreamLeaseHolder = 'user' | 'project';

export interface StreamLeaseCaps {
  readonly user: number;
  readonly project: number;
}

/**
 * Takes `lease` for the user and the project, or neither. Answers the holders whose cap was
 * reached (empty when taken).
 */
export async function takeStreamLease(
  projectId: string,
  userId: string,
  lease: StreamLease,
  caps: StreamLeaseCaps,
): Promise<StreamLeaseHolder[]> {
  const update = (Key: Record<string, string>, cap: number) => ({
    Update: {
      TableName: tableName,
      Key,
      UpdateExpression: 'ADD #leases :lease SET #ttl = :ttl',
      ConditionExpression: 'attribute_not_exists(#leases) OR size(#leases) < :cap',
      ExpressionAttributeNames: { '#leases': STREAM_LEASES_ATTRIBUTE, '#ttl': 'ttl' },
      ExpressionAttributeValues: { ':lease': new Set([streamLeaseEntry(lease)]), ':ttl': Math.ceil(lease.expiresAt / 1000), ':cap': cap },
    },
  });
  try {
    await transactWrite([
      update(userStreamLeasesKey(projectId, userId), caps.user),
      update(projectStreamLeasesKey(projectId), caps.project),
    ]);
    return [];
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    const holders: StreamLeaseHolder[] = ['user', 'project'];
    const failed = failedConditionParts(error);
    return holders.filter((_, index) => failed.includes(index));
  }
}

/** The leases a holder has on record, expired ones included; entries that do not parse are left out. */
export async function readStreamLeases(projectId: string, userId: string, holder: StreamLeaseHolder) {
  const Key = holder === 'user' ? userStreamLeasesKey(projectId, userId) : projectStreamLeasesKey(projectId);
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key, ConsistentRead: true }));
  const set = Item?.[STREAM_LEASES_ATTRIBUTE];
  if (!(set instanceof Set)) return [];
  return [...(set as Set<string>)].flatMap((entry) => parseEntry(entry) ?? []);
}

/** Takes these entries out of a holder's set (absent ones are no-ops). */
export async function dropStreamLeases(projectId: string, userId: string, holder: StreamLeaseHolder, entries: readonly string[]) {
  if (entries.length === 0) return;
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: holder === 'user' ? userStreamLeasesKey(projectId, userId) : projectStreamLeasesKey(projectId),
        UpdateExpression: 'DELETE #leases :entries',
        // An update creates a missing item; a holder whose item expired has nothing to give back.
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeNames: { '#leases': STREAM_LEASES_ATTRIBUTE },
        ExpressionAttributeValues: { ':entries': new Set(entries) },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** Deletes the user's lease item, whatever it holds (idempotent): their streams are closed or end on their own. */
export async function deleteUserStreamLeases(projectId: string, userId: string): Promise<void> {
  await db.send(new DeleteCommand({ TableName: tableName, Key: userStreamLeasesKey(projectId, userId) }));
}
