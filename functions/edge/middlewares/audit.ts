import type { MiddlewareObj, Request } from '@middy/core';
import type { Context } from 'aws-lambda';
import { newAuditEvent, recordAuditEvent } from '#domain/audit/audit-log';
import type { Principal } from '#shared/auth';
import type { AuditActor, AuditTarget } from '#shared/db/audit-event';
import { HttpError } from '#shared/errors';
import { logger } from '#shared/logger';
import { type AuditCondition, type AuditEntry, type HttpRoute, ROLES, type Role } from '#wiring';

interface AuditContext extends Context {
  traceId: string;
  principal?: Principal;
  input?: { readonly body?: unknown; readonly query?: unknown; readonly params?: unknown };
}

interface AuditedEvent {
  readonly pathParameters?: Readonly<Record<string, string | undefined>>;
}

interface Answer {
  readonly statusCode?: number;
  readonly body?: string;
}

/** Longest string copied into a target: ids are 128 at most, so anything longer is not an id. */
const MAX_VALUE_LENGTH = 200;
const MAX_LIST_LENGTH = 50;

type Scalar = string | number | boolean;
const isScalar = (value: unknown): value is Scalar =>
  (typeof value === 'string' && value.length <= MAX_VALUE_LENGTH) || typeof value === 'number' || typeof value === 'boolean';

/** A field's value if it is an id-like scalar or a short list of them; anything else is left out. */
function copyable(value: unknown): Scalar | Scalar[] | undefined {
  if (isScalar(value)) return value;
  if (Array.isArray(value) && value.length <= MAX_LIST_LENGTH && value.every(isScalar)) return value;
  return undefined;
}

const fieldOf = (source: unknown, name: string): unknown =>
  typeof source === 'object' && source !== null ? (source as Record<string, unknown>)[name] : undefined;

function actorOf(principal: Principal | undefined, route: HttpRoute): AuditActor {
  if (!principal) return { kind: route.auth === 'operator' ? 'operator' : 'service' };
  if (principal.kind === 'service') return { kind: 'service' };
  const role = [...ROLES].reverse().find((candidate) => principal.roles.includes(candidate)) ?? 'guest';
  return { kind: 'user', userId: principal.userId, role };
}

function targetOf(
  entry: AuditEntry,
  request: Request<AuditedEvent, unknown, Error, AuditContext>,
  answer: Answer | undefined,
): AuditTarget {
  const { event, context } = request;
  const target: AuditTarget = {};
  const params = context.input?.params ?? event.pathParameters ?? {};
  for (const [name, value] of Object.entries(params as Record<string, unknown>)) {
    const copied = copyable(value);
    if (copied !== undefined) target[name] = copied;
  }
  let response: unknown;
  for (const field of entry.target ?? []) {
    const [part, name = ''] = field.split('.', 2) as ['body' | 'query' | 'response', string];
    if (part === 'response') {
      if (!answer?.body) continue;
      response ??= JSON.parse(answer.body);
    }
    const source = part === 'response' ? response : context.input?.[part];
    const copied = copyable(fieldOf(source, name));
    if (copied !== undefined) target[name] = copied;
  }
  const principal = context.principal;
  if (entry.subject && principal?.kind === 'user') target.subject = principal.subject ?? principal.userId;
  return target;
}

/**
 * Whether the request meets the entry's `only` condition: a role field at or above its floor (an
 * absent one reads as `member`, the role a token without `roles` carries), or a path parameter
 * naming someone other than the calling user.
 */
function meets(condition: AuditCondition | undefined, request: Request<AuditedEvent, unknown, Error, AuditContext>): boolean {
  if (!condition) return true;
  const { event, context } = request;
  const [part, name = ''] = condition.field.split('.', 2) as ['body' | 'query' | 'params', string];
  const source = part === 'params' ? (context.input?.params ?? event.pathParameters) : context.input?.[part];
  const value = fieldOf(source, name);
  if ('notCaller' in condition) {
    const principal = context.principal;
    return !(principal?.kind === 'user' && principal.userId === value);
  }
  const roles = (Array.isArray(value) ? value : [value ?? 'member']).filter((role): role is Role => ROLES.includes(role as Role));
  return roles.some((role) => ROLES.indexOf(role) >= ROLES.indexOf(condition.roleAtLeast));
}

/**
 * Writes the audit event of a privileged route (its wiring-table `audit` entry): exactly one per
 * request the route answers 2xx (`succeeded`) or 403 (`denied`, an authenticated caller refused:
 * what a SIEM watches for). Other refusals (400, 401, 404, 409, 429) change nothing and are not
 * audited. The event holds who (`actor`), what (`action`), on what (`target`: path parameters
 * and the fields the entry names, ids only), when, the trace id and the status; never a body.
 *
 * A success whose event cannot be written fails the request (500 `audit_unavailable`, after
 * retries): see `recordAuditEvent`. A denial's failed write is logged and the 403 stands. A route
 * with an `only` condition audits just the requests that meet it (a token of moderator or above).
 */
export function auditTrail<E extends AuditedEvent, C extends AuditContext>(route: HttpRoute): MiddlewareObj<E, unknown, Error, C> {
  const entry = route.audit;
  const write = async (request: Request<E, unknown, Error, C>, status: number, answer: Answer | undefined) => {
    if (!entry || !meets(entry.only, request as unknown as Request<AuditedEvent, unknown, Error, AuditContext>)) return;
    const { context } = request;
    const target = targetOf(entry, request as unknown as Request<AuditedEvent, unknown, Error, AuditContext>, answer);
    // Operator routes name their project in the path or the answer (`POST /platform/projects`).
    const projectId = context.principal?.projectId ?? target.projectId;
    if (typeof projectId !== 'string') throw new Error(`Route ${route.id} audits into no project: name projectId in its audit target`);
    await recordAuditEvent(
      newAuditEvent({
        projectId,
        action: entry.action,
        actor: actorOf(context.principal, route),
        target,
        status,
        traceId: context.traceId,
      }),
    );
  };
  return {
    after: async (request) => {
      const answer = request.response as Answer | undefined;
      const status = answer?.statusCode ?? 200;
      if (status >= 200 && status < 300) await write(request, status, answer);
    },
    onError: async (request) => {
      const { error, context } = request;
      // Only a refusal of a known caller: a 403 has a verified project to write into.
      if (!(error instanceof HttpError) || error.statusCode !== 403 || !context.principal) return;
      await write(request, 403, undefined).catch((failure: unknown) =>
        logger.error('audit event of a denied request not written', { error: failure as Error, route: route.id }),
      );
    },
  };
}
