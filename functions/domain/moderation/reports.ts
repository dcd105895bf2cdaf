import { newEvent, outboxPut } from '#domain/events/outbox';
import { accessRoom } from '#domain/rooms/rooms';
import { actorId, type Principal } from '#shared/auth';
import { findMessage } from '#shared/db/message';
import {
  closeReport,
  findReport,
  newReportPart,
  type Report,
  type ReportItem,
  type ReportStatus,
  reportCursor,
  reportIdFor,
  reportsPage,
  toReport,
} from '#shared/db/report';
import { isConditionFailure, transactWrite } from '#shared/db/transact';
import { ConflictError, MessageNotFoundError, NotFoundError } from '#shared/errors';

export interface ReportInput {
  readonly roomId: string;
  readonly reason: ReportItem['reason'];
  readonly note?: string | undefined;
}

/**
 * A member reports a message to the project's moderators: the report and its `report.created`
 * event in one transaction. Anyone who may read the room may report its messages; one report per
 * user and message (a second is `409 already_reported`); a deleted message cannot be reported.
 */
export async function reportMessage(principal: Principal & { kind: 'user' }, messageId: number, input: ReportInput): Promise<Report> {
  const { projectId, userId } = principal;
  const { roomId } = input;
  await accessRoom(principal, roomId, { join: false });
  const message = await findMessage(projectId, roomId, messageId);
  if (!message) throw new MessageNotFoundError();
  if (message.deletedAt !== undefined || message.erasedAt !== undefined)
    throw new ConflictError('message_deleted', 'The message was deleted');
  const item: Omit<ReportItem, 'pk' | 'sk'> = {
    projectId,
    reportId: reportIdFor(roomId, messageId, userId),
    roomId,
    messageId,
    reporterId: userId,
    reason: input.reason,
    note: input.note ?? null,
    status: 'open',
    createdAt: new Date().toISOString(),
  };
  const event = newEvent('report.created', projectId, {
    roomId,
    messageId,
    reporterId: userId,
    reportId: item.reportId,
    reason: item.reason,
    note: item.note,
    createdAt: item.createdAt,
  });
  try {
    await transactWrite([newReportPart(item), outboxPut(event)]);
  } catch (error) {
    if (isConditionFailure(error)) throw new ConflictError('already_reported', 'You reported this message already');
    throw error;
  }
  return toReport({ ...item, pk: '', sk: 'REPORT' });
}

/** One page of the project's reports with `status`, newest first; `nextCursor` continues it. */
export async function listReports(
  projectId: string,
  options: { status: ReportStatus; limit: number; cursor?: string | undefined },
): Promise<{ reports: Report[]; nextCursor: string | null }> {
  const before = options.cursor === undefined ? undefined : Buffer.from(options.cursor, 'base64url').toString('utf8');
  const page = await reportsPage(projectId, options.status, { limit: options.limit, ...(before ? { before } : {}) });
  const last = page.items.at(-1);
  // Opaque to the caller: the index key of the page's last report.
  return {
    reports: page.items.map(toReport),
    nextCursor: page.more && last ? Buffer.from(reportCursor(last)).toString('base64url') : null,
  };
}

const reportNotFound = () => new NotFoundError('report_not_found', 'No such report in this project');

/**
 * A moderator closes an open report: `resolved` (acted on) or `dismissed` (no action), with an
 * optional note. Closed reports are final: closing one again is `409 report_closed`.
 */
export async function decideReport(
  principal: Principal,
  reportId: string,
  decision: { status: 'resolved' | 'dismissed'; note?: string | undefined },
): Promise<Report> {
  const closed = await closeReport(principal.projectId, reportId, {
    status: decision.status,
    closedBy: actorId(principal),
    closedAt: new Date().toISOString(),
    note: decision.note ?? null,
  });
  if (closed) return toReport(closed);
  const existing = await findReport(principal.projectId, reportId);
  if (!existing) throw reportNotFound();
  throw new ConflictError('report_closed', `The report is ${existing.status} already`);
}
