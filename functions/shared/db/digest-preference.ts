import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { deleteAll, getAll, putAll } from './batch';
import { db, tableName } from './client';
import { projectPk, userPk } from './keys';
import { isConditionFailure, type TransactPart } from './transact';

/**
 * A user's digest preferences, beside their credentials. Only enabled rows carry the gsi1 key of
 * the project's subscriber list (a sparse index), so a run reads exactly the users it delivers to.
 * `lastDigest` is the window of the user's latest digest date: a second run of that date reads the
 * same window, the next date starts where it ended.
 */
export const DIGEST_PREFERENCE_SK = 'DIGEST#PREFS' as const;

export const digestPreferenceKey = (projectId: string, userId: string) => ({ pk: userPk(projectId, userId), sk: DIGEST_PREFERENCE_SK });
export const digestSubscribersIndexKey = (projectId: string) => `${projectPk(projectId)}#DIGEST#SUBSCRIBERS`;
const subscriberSk = (userId: string) => `U#${userId}`;

const digestWindow = z.object({ date: z.string(), since: z.string(), at: z.string() });
export type DigestWindow = z.infer<typeof digestWindow>;

export const digestPreferenceItem = z.object({
  pk: z.string(),
  sk: z.literal(DIGEST_PREFERENCE_SK),
  projectId: z.string(),
  userId: z.string(),
  enabled: z.boolean(),
  email: z.optional(z.nullable(z.string())),
  inAppEnabled: z.boolean(),
  webPushEnabled: z.boolean(),
  emailEnabled: z.boolean(),
  updatedAt: z.string(),
  gsi1pk: z.optional(z.string()),
  gsi1sk: z.optional(z.string()),
  lastDigest: z.optional(digestWindow),
});
export type DigestPreferenceItem = z.infer<typeof digestPreferenceItem>;

/** What a row holds before the user changes anything: the spec's `enabled` off and in-app on; the channels that leave the service are opt-in. */
export const DIGEST_PREFERENCE_DEFAULTS = {
  enabled: false,
  email: null,
  inAppEnabled: true,
  webPushEnabled: false,
  emailEnabled: false,
} as const;

export type DigestPreferencePatch = Partial<{
  enabled: boolean;
  email: string | null;
  inAppEnabled: boolean;
  webPushEnabled: boolean;
  emailEnabled: boolean;
}>;

export async function findDigestPreference(projectId: string, userId: string): Promise<DigestPreferenceItem | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: digestPreferenceKey(projectId, userId), ConsistentRead: true }),
  );
  return Item ? digestPreferenceItem.parse(Item) : undefined;
}

/** The rows of these users that exist, in one BatchGetItem per 100. */
export async function findDigestPreferences(projectId: string, userIds: readonly string[]): Promise<DigestPreferenceItem[]> {
  const items = await getAll(userIds.map((userId) => digestPreferenceKey(projectId, userId)));
  return items.map((item) => digestPreferenceItem.parse(item));
}

/**
 * Sets the given fields in one UpdateItem, creating the row with the defaults for the others, and
 * moves the row into or out of the subscriber index with `enabled`: the row after.
 */
export async function updateDigestPreference(
  projectId: string,
  userId: string,
  patch: DigestPreferencePatch,
  now: string,
): Promise<DigestPreferenceItem> {
  const sets = ['projectId = :projectId', 'userId = :userId', 'updatedAt = :now'];
  const removes: string[] = [];
  const values: Record<string, unknown> = { ':projectId': projectId, ':userId': userId, ':now': now };
  const names: Record<string, string> = {};
  for (const [field, fallback] of Object.entries(DIGEST_PREFERENCE_DEFAULTS)) {
    names[`#${field}`] = field;
    const given = patch[field as keyof DigestPreferencePatch];
    if (given !== undefined) {
      sets.push(`#${field} = :${field}`);
      values[`:${field}`] = given;
    } else {
      sets.push(`#${field} = if_not_exists(#${field}, :${field}Default)`);
      values[`:${field}Default`] = fallback;
    }
  }
  if (patch.enabled === true) {
    sets.push('gsi1pk = :index', 'gsi1sk = :member');
    values[':index'] = digestSubscribersIndexKey(projectId);
    values[':member'] = subscriberSk(userId);
  } else if (patch.enabled === false) {
    removes.push('gsi1pk', 'gsi1sk');
  }
  const { Attributes } = await db.send(
    new UpdateCommand({
      TableName: tableName,
      Key: digestPreferenceKey(projectId, userId),
      UpdateExpression: `SET ${sets.join(', ')}${removes.length > 0 ? ` REMOVE ${removes.join(', ')}` : ''}`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
      ReturnValues: 'ALL_NEW',
    }),
  );
  return digestPreferenceItem.parse(Attributes);
}

/** Turns the e-mail channel off on an existing row: `false` when the user has none. */
export async function turnOffDigestEmail(projectId: string, userId: string, now: string): Promise<boolean> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: digestPreferenceKey(projectId, userId),
        UpdateExpression: 'SET emailEnabled = :off, updatedAt = :now',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':off': false, ':now': now },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

const recordWindow = (projectId: string, userId: string, window: DigestWindow) => ({
  TableName: tableName,
  Key: digestPreferenceKey(projectId, userId),
  UpdateExpression: 'SET lastDigest = :window',
  ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(lastDigest) OR lastDigest.#date < :date)',
  ExpressionAttributeNames: { '#date': 'date' },
  ExpressionAttributeValues: { ':window': window, ':date': window.date },
});

/**
 * Records the window of a digest date unless the row already holds that date or a later one
 * (a repeated or concurrent run keeps the first window): `false` then.
 */
export async function recordDigestWindow(projectId: string, userId: string, window: DigestWindow): Promise<boolean> {
  try {
    await db.send(new UpdateCommand(recordWindow(projectId, userId, window)));
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** {@link recordDigestWindow} as a transaction part: the transaction fails when the row holds that date or a later one. */
export const recordDigestWindowPart = (projectId: string, userId: string, window: DigestWindow): TransactPart => ({
  Update: recordWindow(projectId, userId, window),
});

/** One page of the project's enabled subscribers by user id, after `after`; `next` names the last one when more may follow. */
export async function digestSubscribersPage(
  projectId: string,
  page: { after?: string; limit: number },
): Promise<{ userIds: string[]; next?: string }> {
  const index = digestSubscribersIndexKey(projectId);
  const { Items = [], LastEvaluatedKey } = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :pk',
      ExpressionAttributeValues: { ':pk': index },
      ProjectionExpression: 'userId',
      Limit: page.limit,
      ...(page.after === undefined
        ? {}
        : { ExclusiveStartKey: { ...digestPreferenceKey(projectId, page.after), gsi1pk: index, gsi1sk: subscriberSk(page.after) } }),
    }),
  );
  const userIds = Items.map((item) => String(item.userId));
  return LastEvaluatedKey && userIds.length > 0 ? { userIds, next: userIds.at(-1) as string } : { userIds };
}

/** Writes many rows at once (seeding, imports): 25 per BatchWriteItem. */
export const putDigestPreferences = (items: readonly DigestPreferenceItem[]): Promise<void> => putAll(items);

/** The row of an enabled (or not) user, whole, as `putDigestPreferences` writes it. */
export function digestPreferenceItemFor(
  projectId: string,
  userId: string,
  fields: Omit<DigestPreferenceItem, 'pk' | 'sk' | 'projectId' | 'userId' | 'gsi1pk' | 'gsi1sk' | 'lastDigest'>,
): DigestPreferenceItem {
  return {
    pk: userPk(projectId, userId),
    sk: DIGEST_PREFERENCE_SK,
    projectId,
    userId,
    ...fields,
    ...(fields.enabled ? { gsi1pk: digestSubscribersIndexKey(projectId), gsi1sk: subscriberSk(userId) } : {}),
  };
}

/** Erasure: the user's row. */
export const deleteDigestPreference = (projectId: string, userId: string) => deleteAll([digestPreferenceKey(projectId, userId)]);
