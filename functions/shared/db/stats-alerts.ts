import { DeleteCommand, GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { projectPk } from './keys';
import { putIfAbsent } from './put-if-absent';
import { queryAll } from './query';
import { isConditionFailure } from './transact';

/**
 * Alert events of a project (`A#<firedAt>#<rule>`, newest last by key) and, while a rule's alert is
 * open, its marker (`OPEN#<rule>`), listed in the one index partition of open alerts so the
 * one-minute evaluation finds the projects whose alerts may resolve without scanning projects.
 */
const alertsPk = (projectId: string) => `${projectPk(projectId)}#ALERTS`;
const OPEN_ALERTS_INDEX_PK = 'STATS#OPEN_ALERTS';

export const alertEventItem = z.object({
  id: z.string(),
  rule: z.string(),
  firedAt: z.string(),
  resolvedAt: z.nullable(z.string()),
  /** The rule's value when it fired, and the threshold it crossed. */
  value: z.number(),
  threshold: z.number(),
  summary: z.string(),
});
export type AlertEvent = z.infer<typeof alertEventItem>;

/**
 * Opens the rule's alert unless one is open: the marker first (conditional), then the event.
 * `false` when it was open already.
 */
export async function openAlert(projectId: string, event: Omit<AlertEvent, 'resolvedAt'>, ttl: number): Promise<boolean> {
  const opened = await putIfAbsent({
    pk: alertsPk(projectId),
    sk: `OPEN#${event.rule}`,
    eventSk: `A#${event.id}`,
    gsi1pk: OPEN_ALERTS_INDEX_PK,
    gsi1sk: `${projectId}#${event.rule}`,
    projectId,
  });
  if (!opened) return false;
  await db.send(
    new PutCommand({ TableName: tableName, Item: { pk: alertsPk(projectId), sk: `A#${event.id}`, ...event, resolvedAt: null, ttl } }),
  );
  return true;
}

/** Resolves the rule's open alert at `resolvedAt`; `false` when none was open. */
export async function resolveAlert(projectId: string, rule: string, resolvedAt: string): Promise<boolean> {
  const key = { pk: alertsPk(projectId), sk: `OPEN#${rule}` };
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }));
  if (!Item) return false;
  try {
    await db.send(new DeleteCommand({ TableName: tableName, Key: key, ConditionExpression: 'attribute_exists(pk)' }));
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
  await db
    .send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk: alertsPk(projectId), sk: String(Item.eventSk) },
        UpdateExpression: 'SET resolvedAt = :at',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':at': resolvedAt },
      }),
    )
    .catch((error: unknown) => {
      if (!isConditionFailure(error)) throw error;
    });
  return true;
}

/** The rules whose alert is open for the project. */
export async function openRules(projectId: string): Promise<Set<string>> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND begins_with(sk, :open)',
    ExpressionAttributeValues: { ':pk': alertsPk(projectId), ':open': 'OPEN#' },
    ProjectionExpression: 'sk',
  });
  return new Set(items.map((item) => String(item.sk).slice('OPEN#'.length)));
}

/** Every project with an open alert. */
export async function projectsWithOpenAlerts(): Promise<Set<string>> {
  const items = await queryAll({
    IndexName: 'gsi1',
    KeyConditionExpression: 'gsi1pk = :pk',
    ExpressionAttributeValues: { ':pk': OPEN_ALERTS_INDEX_PK },
    ProjectionExpression: 'projectId',
  });
  return new Set(items.map((item) => String(item.projectId)));
}

/** The project's alert events, newest first. */
export async function listAlertEvents(projectId: string, limit: number): Promise<AlertEvent[]> {
  const { Items } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :event)',
      ExpressionAttributeValues: { ':pk': alertsPk(projectId), ':event': 'A#' },
      ScanIndexForward: false,
      Limit: limit,
    }),
  );
  return (Items ?? []).map((item) => alertEventItem.parse(item));
}
