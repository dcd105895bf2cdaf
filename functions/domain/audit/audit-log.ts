import { config } from '#shared/config';
import {
  type AuditActor,
  type AuditEventItem,
  type AuditTarget,
  auditEventCursor,
  auditEventsPage,
  type NewAuditEvent,
  putAuditEvent,
} from '#shared/db/audit-event';
import { HttpError } from '#shared/errors';
import { newId } from '#shared/ids';
import { logger } from '#shared/logger';

export interface AuditEventInput {
  readonly projectId: string;
  readonly action: string;
  readonly actor: AuditActor;
  readonly target: AuditTarget;
  readonly status: number;
  readonly traceId: string;
}

/** Attempts of one audit write, each after the DynamoDB client's own retries of throttling and 5xx. */
export const AUDIT_WRITE_ATTEMPTS = 3;
const RETRY_DELAYS_MS = [50, 200];

/** The event as stored: its id, time and expiry fixed once, so every attempt writes the same item. */
export function newAuditEvent(input: AuditEventInput, now = new Date()): NewAuditEvent {
  return {
    ...input,
    eventId: newId('aud'),
    outcome: input.status === 403 ? 'denied' : 'succeeded',
    at: now.toISOString(),
    ttl: Math.floor(now.getTime() / 1000) + config.AUDIT_RETENTION_DAYS * 86_400,
  };
}

/**
 * Writes one audit event, retried ({@link AUDIT_WRITE_ATTEMPTS}) and idempotent (a conditional put
 * of a key fixed before the first attempt). Past the last attempt the event is logged whole at
 * error level and the caller gets 500 `audit_unavailable`: a privileged action is never answered
 * as done without its record (docs/audit.md, "When the write fails").
 */
export async function recordAuditEvent(event: NewAuditEvent): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await putAuditEvent(event);
      return;
    } catch (error) {
      if (attempt >= AUDIT_WRITE_ATTEMPTS) {
        logger.error('audit event not written', { error: error as Error, auditEvent: event });
        throw new HttpError(500, 'audit_unavailable', 'The audit event could not be written; the action may have taken effect');
      }
      logger.warn('audit write failed, retrying', { error: error as Error, attempt });
      await new Promise((resolve) => setTimeout(resolve, RETRY_DELAYS_MS[attempt - 1] ?? 200));
    }
  }
}

/** An event as `GET /admin/audit/events` answers it. */
export function toAuditEvent(item: AuditEventItem) {
  return {
    id: item.eventId,
    action: item.action,
    actor: item.actor,
    target: item.target,
    outcome: item.outcome,
    status: item.status,
    traceId: item.traceId,
    at: item.at,
  };
}
export type AuditEvent = ReturnType<typeof toAuditEvent>;

/** One page of the project's audit events, newest first; `nextCursor` (opaque) continues it. */
export async function listAuditEvents(
  projectId: string,
  options: { limit: number; cursor?: string | undefined },
): Promise<{ events: AuditEvent[]; nextCursor: string | null }> {
  const before = options.cursor === undefined ? undefined : Buffer.from(options.cursor, 'base64url').toString('utf8');
  const page = await auditEventsPage(projectId, { limit: options.limit, before });
  const last = page.items.at(-1);
  return {
    events: page.items.map(toAuditEvent),
    nextCursor: page.more && last ? Buffer.from(auditEventCursor(last)).toString('base64url') : null,
  };
}
