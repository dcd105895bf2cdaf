import { createHmac } from 'node:crypto';
import { newAuditEvent } from '#domain/audit/audit-log';
import { constantTimeEqual } from '#shared/constant-time';
import { auditEventPart } from '#shared/db/audit-event';
import { type AuditResultItem, auditResultPart, MARKETPLACE_RESULTS, MARKETPLACE_SUBJECT_KINDS } from '#shared/db/audit-result';
import { projectExists } from '#shared/db/project';
import { isConditionFailure, transactWrite } from '#shared/db/transact';
import { NotConfiguredError, NotFoundError, UnauthorizedError } from '#shared/errors';
import { idSchema, PROJECT_ID_PATTERN } from '#shared/ids';
import * as z from '#shared/schema';
import { secretValue } from '#shared/secrets';
import { signedTimestampVerdict } from '#shared/signed-timestamp';

/** How far `t` of `X-Service-Signature` may be from now, either way. */
export const MARKETPLACE_SIGNATURE_WINDOW_SECONDS = 300;

const finding = z.strictObject({
  code: z.string().check(z.minLength(1), z.maxLength(100)),
  severity: z.enum(['info', 'low', 'medium', 'high', 'critical']),
  message: z.string().check(z.minLength(1), z.maxLength(1000)),
});

/** What the marketplace posts: its verdict on one subject of a project. */
export const marketplaceResultBody = z.strictObject({
  projectId: z.string().check(z.regex(PROJECT_ID_PATTERN, 'must be a project id')),
  subject: z.strictObject({ kind: z.enum(MARKETPLACE_SUBJECT_KINDS), id: idSchema }),
  result: z.enum(MARKETPLACE_RESULTS),
  findings: z._default(z.array(finding).check(z.maxLength(100)), []),
  auditedAt: z.iso.datetime({ offset: true }),
});
export type MarketplaceResult = z.infer<typeof marketplaceResultBody>;

const refused = (message: string) => new UnauthorizedError('invalid_service_signature', message);

/**
 * Checks `X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` under
 * the `marketplace-signing` secret, on the bytes as sent and before anything is parsed: 503 while
 * the secret is not set, 401 `invalid_service_signature` for a missing, malformed, wrong or stale
 * one (outside {@link MARKETPLACE_SIGNATURE_WINDOW_SECONDS}).
 */
export async function verifyMarketplaceSignature(
  header: string | undefined,
  rawBody: Buffer,
  nowSeconds = Date.now() / 1000,
): Promise<void> {
  const secret = await secretValue('marketplace-signing');
  if (!secret) {
    throw new NotConfiguredError(
      'marketplace_not_configured',
      'The marketplace audit callback is not configured (MARKETPLACE_AUDIT_SECRET)',
    );
  }
  const parts = new Map(
    (header ?? '').split(',').map((part) => {
      const at = part.indexOf('=');
      return [part.slice(0, at).trim(), part.slice(at + 1).trim()] as const;
    }),
  );
  const t = parts.get('t');
  const v1 = parts.get('v1');
  if (!v1 || !/^[0-9a-f]{64}$/.test(v1)) throw refused('X-Service-Signature must be t=<unix seconds>,v1=<64 hex digits>');
  const verdict = signedTimestampVerdict(t, MARKETPLACE_SIGNATURE_WINDOW_SECONDS, nowSeconds);
  if (verdict === 'malformed') throw refused('X-Service-Signature t= is missing or not a Unix time in seconds');
  if (verdict === 'stale') throw refused('X-Service-Signature t= is more than 5 minutes from now: the request is stale or replayed');
  const expected = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest('hex');
  if (!constantTimeEqual(v1, expected)) throw refused('X-Service-Signature does not match the body');
}

/**
 * Stores the marketplace's result as the subject's latest, with one audit event (actor
 * `marketplace`) in the same transaction: both or neither. A result audited no later than the one
 * stored (a replay within the window, a late retry) stores nothing and adds no event.
 */
export async function recordMarketplaceResult(input: MarketplaceResult, traceId: string): Promise<{ stored: boolean }> {
  if (!(await projectExists(input.projectId))) throw new NotFoundError('project_not_found', 'Project not found');
  const item: Omit<AuditResultItem, 'pk' | 'sk'> = {
    projectId: input.projectId,
    subjectKind: input.subject.kind,
    subjectId: input.subject.id,
    result: input.result,
    findings: input.findings,
    // One form, so that the stored times compare as text.
    auditedAt: new Date(input.auditedAt).toISOString(),
    receivedAt: new Date().toISOString(),
    traceId,
  };
  const event = newAuditEvent({
    projectId: input.projectId,
    action: 'marketplace.audit_result',
    actor: { kind: 'marketplace' },
    target: {
      subjectKind: item.subjectKind,
      subjectId: item.subjectId,
      result: item.result,
      findings: item.findings.length,
      auditedAt: item.auditedAt,
    },
    status: 201,
    traceId,
  });
  try {
    await transactWrite([auditResultPart(item), auditEventPart(event)]);
    return { stored: true };
  } catch (error) {
    if (isConditionFailure(error)) return { stored: false };
    throw error;
  }
}
