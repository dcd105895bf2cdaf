import * as z from '#shared/schema';
import { tableName } from './client';
import { projectPk } from './keys';
import type { TransactPart } from './transact';

/** What the marketplace audits in a project. */
export const MARKETPLACE_SUBJECT_KINDS = ['app', 'agent', 'bridge', 'webhook', 'widget'] as const;
export const MARKETPLACE_RESULTS = ['passed', 'failed', 'needs_changes'] as const;

/**
 * The marketplace's latest audit result of one subject of a project (pattern 75): one item per
 * subject, replaced only by a result audited later, so a replayed or late callback never
 * overwrites a newer verdict.
 */
export const auditResultItem = z.object({
  pk: z.string(),
  sk: z.string(),
  projectId: z.string(),
  subjectKind: z.enum(MARKETPLACE_SUBJECT_KINDS),
  subjectId: z.string(),
  result: z.enum(MARKETPLACE_RESULTS),
  findings: z.array(z.object({ code: z.string(), severity: z.string(), message: z.string() })),
  auditedAt: z.string(),
  receivedAt: z.string(),
  traceId: z.string(),
});
export type AuditResultItem = z.infer<typeof auditResultItem>;

export const auditResultKey = (projectId: string, subjectKind: string, subjectId: string) => ({
  pk: `${projectPk(projectId)}#MKTAUDIT`,
  sk: `${subjectKind}#${subjectId}`,
});

/** The result as a transaction part: `ConditionalCheckFailed` when the stored one was audited at the same time or later. */
export function auditResultPart(item: Omit<AuditResultItem, 'pk' | 'sk'>): TransactPart {
  return {
    Put: {
      TableName: tableName,
      Item: { ...auditResultKey(item.projectId, item.subjectKind, item.subjectId), ...item },
      ConditionExpression: 'attribute_not_exists(pk) OR auditedAt < :auditedAt',
      ExpressionAttributeValues: { ':auditedAt': item.auditedAt },
    },
  };
}
