import { createHash } from 'node:crypto';
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { deleteAll } from './batch';
import { db, tableName } from './client';
import { projectPk, userPk } from './keys';
import { queryAll } from './query';
import { isConditionFailure, type TransactPart } from './transact';

/** Why a member reports a message. */
export const REPORT_REASONS = ['spam', 'harassment', 'hate', 'violence', 'sexual', 'self_harm', 'misinformation', 'other'] as const;
export const reportReason = z.enum(REPORT_REASONS);

/** `open` until a moderator resolves (acted on it) or dismisses (no action) it; both are final. */
export const REPORT_STATUSES = ['open', 'resolved', 'dismissed'] as const;
export const reportStatus = z.enum(REPORT_STATUSES);
export type ReportStatus = z.infer<typeof reportStatus>;

/**
 * A member's report of a message, in its own partition under an id derived from (room, message,
 * reporter), so a second report of the same message by the same user is the same key and its
 * conditional put fails: one report per user and message without a guard item. Listed by status
 * through gsi1 (newest first) and by reporter through gsi2 (the GDPR export and erasure).
 */
export const reportItem = z.object({
  pk: z.string(),
  sk: z.literal('REPORT'),
  projectId: z.string(),
  reportId: z.string(),
  roomId: z.string(),
  messageId: z.number().check(z.int()),
  reporterId: z.string(),
  reason: reportReason,
  note: z.nullable(z.string()),
  status: reportStatus,
  createdAt: z.string(),
  closedAt: z.optional(z.string()),
  closedBy: z.optional(z.string()),
  resolutionNote: z.optional(z.nullable(z.string())),
});
export type ReportItem = z.infer<typeof reportItem>;

export const reportIdFor = (roomId: string, messageId: number, reporterId: string) =>
  `rpt_${createHash('sha256').update([roomId, messageId, reporterId].join('\u0000')).digest('hex').slice(0, 24)}`;

export const reportKey = (projectId: string, reportId: string) => ({
  pk: `${projectPk(projectId)}#REPORT#${reportId}`,
  sk: 'REPORT' as const,
});
const reportsByStatusPk = (projectId: string, status: ReportStatus) => `${projectPk(projectId)}#REPORTS#${status}`;
const reportsOfReporterPk = (projectId: string, userId: string) => `${userPk(projectId, userId)}#REPORTS`;
const indexSk = (item: Pick<ReportItem, 'createdAt' | 'reportId'>) => `${item.createdAt}#${item.reportId}`;

export function toReport(item: ReportItem) {
  return {
    id: item.reportId,
    roomId: item.roomId,
    messageId: item.messageId,
    reporterId: item.reporterId,
    reason: item.reason,
    note: item.note,
    status: item.status,
    createdAt: item.createdAt,
    closedAt: item.closedAt ?? null,
    closedBy: item.closedBy ?? null,
    resolutionNote: item.resolutionNote ?? null,
  };
}
export type Report = ReturnType<typeof toReport>;

/** The new report, as a transaction part: `ConditionalCheckFailed` when the reporter reported the message already. */
export function newReportPart(item: Omit<ReportItem, 'pk' | 'sk'>): TransactPart {
  return {
    Put: {
      TableName: tableName,
      Item: {
        ...reportKey(item.projectId, item.reportId),
        ...item,
        gsi1pk: reportsByStatusPk(item.projectId, item.status),
        gsi1sk: indexSk(item),
        gsi2pk: reportsOfReporterPk(item.projectId, item.reporterId),
        gsi2sk: indexSk(item),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

export async function findReport(projectId: string, reportId: string): Promise<ReportItem | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: reportKey(projectId, reportId), ConsistentRead: true }));
  return Item ? reportItem.parse(Item) : undefined;
}

/**
 * Closes an open report (`resolved` or `dismissed`) and moves it to that status's list: `undefined`
 * when it is not open (closed already, or gone).
 */
export async function closeReport(
  projectId: string,
  reportId: string,
  close: { status: Exclude<ReportStatus, 'open'>; closedBy: string; closedAt: string; note: string | null },
): Promise<ReportItem | undefined> {
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: reportKey(projectId, reportId),
        UpdateExpression: 'SET #status = :status, gsi1pk = :list, closedAt = :at, closedBy = :by, resolutionNote = :note',
        ConditionExpression: '#status = :open',
        ExpressionAttributeNames: { '#status': 'status' },
        ExpressionAttributeValues: {
          ':status': close.status,
          ':list': reportsByStatusPk(projectId, close.status),
          ':at': close.closedAt,
          ':by': close.closedBy,
          ':note': close.note,
          ':open': 'open',
        },
        ReturnValues: 'ALL_NEW',
      }),
    );
    return reportItem.parse(Attributes);
  } catch (error) {
    if (isConditionFailure(error)) return undefined;
    throw error;
  }
}

/** One page of the project's reports with `status`, newest first; `cursor` is the last report's index key. */
export async function reportsPage(
  projectId: string,
  status: ReportStatus,
  page: { limit: number; before?: string },
): Promise<{ items: ReportItem[]; more: boolean }> {
  const { Items = [], LastEvaluatedKey } = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: page.before === undefined ? 'gsi1pk = :pk' : 'gsi1pk = :pk AND gsi1sk < :before',
      ExpressionAttributeValues: {
        ':pk': reportsByStatusPk(projectId, status),
        ...(page.before === undefined ? {} : { ':before': page.before }),
      },
      ScanIndexForward: false,
      Limit: page.limit,
    }),
  );
  return { items: Items.map((raw) => reportItem.parse(raw)), more: LastEvaluatedKey !== undefined };
}

/** The cursor that continues a page after `item`. */
export const reportCursor = (item: ReportItem) => indexSk(item);

/** Every report the user filed in the project (gsi2). */
export async function reportsOfUser(projectId: string, userId: string): Promise<ReportItem[]> {
  const items = await queryAll({
    IndexName: 'gsi2',
    KeyConditionExpression: 'gsi2pk = :pk',
    ExpressionAttributeValues: { ':pk': reportsOfReporterPk(projectId, userId) },
  });
  return items.map((raw) => reportItem.parse(raw));
}

export async function deleteReports(items: readonly ReportItem[]): Promise<void> {
  await deleteAll(items.map((item) => reportKey(item.projectId, item.reportId)));
}
