import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { projectPk } from './keys';
import { putIfAbsent } from './put-if-absent';
import type { TransactPart } from './transact';

/** Who did it: a project user with their highest role, the project API key, the operator, or the marketplace. */
export const auditActor = z.union([
  z.object({ kind: z.literal('user'), userId: z.string(), role: z.string() }),
  z.object({ kind: z.enum(['service', 'operator', 'marketplace']) }),
]);
export type AuditActor = z.infer<typeof auditActor>;

/** Ids and small settings only: strings, numbers, booleans, or short lists of them. */
const targetValue = z.union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number(), z.boolean()]))]);
export const auditTarget = z.record(z.string(), targetValue);
export type AuditTarget = z.infer<typeof auditTarget>;

/**
 * One privileged action of a project, append-only: written once with a conditional put, never
 * updated, gone when its `ttl` (`AUDIT_RETENTION_DAYS`) passes. All of a project's events share
 * one partition, sorted by time, so the newest page is one Query (pattern 73).
 */
export const auditEventItem = z.object({
  pk: z.string(),
  sk: z.string(),
  projectId: z.string(),
  eventId: z.string(),
  action: z.string(),
  actor: auditActor,
  target: auditTarget,
  /** `succeeded` for a 2xx, `denied` for a 403. */
  outcome: z.enum(['succeeded', 'denied']),
  status: z.number().check(z.int()),
  traceId: z.string(),
  /** ISO 8601, ms. */
  at: z.string(),
  ttl: z.number().check(z.int()),
});
export type AuditEventItem = z.infer<typeof auditEventItem>;
export type NewAuditEvent = Omit<AuditEventItem, 'pk' | 'sk'>;

const auditPk = (projectId: string) => `${projectPk(projectId)}#AUDIT`;
/** Time first, so the partition reads newest first; the id breaks ties within a millisecond. */
const auditSk = (event: Pick<AuditEventItem, 'at' | 'eventId'>) => `E#${event.at}#${event.eventId}`;

const itemOf = (event: NewAuditEvent): AuditEventItem => ({ pk: auditPk(event.projectId), sk: auditSk(event), ...event });

/**
 * Writes the event unless it is there already: its key is fixed before the first attempt, so a
 * retry after a lost answer finds it written and adds no second one.
 */
export async function putAuditEvent(event: NewAuditEvent): Promise<void> {
  await putIfAbsent(itemOf(event));
}

/** The event as a part of a transaction whose other writes it records. */
export function auditEventPart(event: NewAuditEvent): TransactPart {
  return { Put: { TableName: tableName, Item: itemOf(event), ConditionExpression: 'attribute_not_exists(pk)' } };
}

/** One page of the project's events, newest first, before the sort key `before` (the previous page's last). */
export async function auditEventsPage(
  projectId: string,
  page: { limit: number; before?: string | undefined },
): Promise<{ items: AuditEventItem[]; more: boolean }> {
  const { Items = [], LastEvaluatedKey } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: page.before === undefined ? 'pk = :pk' : 'pk = :pk AND sk < :before',
      ExpressionAttributeValues: { ':pk': auditPk(projectId), ...(page.before === undefined ? {} : { ':before': page.before }) },
      ScanIndexForward: false,
      Limit: page.limit,
    }),
  );
  return { items: Items.map((raw) => auditEventItem.parse(raw)), more: LastEvaluatedKey !== undefined };
}

/** The sort key a page continues after. */
export const auditEventCursor = (item: Pick<AuditEventItem, 'at' | 'eventId'>) => auditSk(item);
