import type { Area, HttpRoute, Role } from './types.ts';
import { ROLES } from './types.ts';

/**
 * Routes a user may call on their own behalf that still touch what an auditor follows: the GDPR
 * export and erasure, the removal of a room member by someone else (a kick: its entry audits only
 * that), and setting a user's password and roles (an API key route already, listed for the reader).
 * Adding a room member is not here: it sets `member` or `guest`, never a privilege, and backends
 * add users to rooms all day.
 */
export const SENSITIVE_USER_ROUTES: readonly string[] = ['ExportSubjectData', 'EraseSubject', 'RemoveRoomMember', 'SetUserCredentials'];

/**
 * Routes the rule below would take for privileged that change nothing an auditor follows, each
 * with the reason; the wiring test holds them to having no `audit` entry.
 */
export const UNAUDITED_ROUTES: Readonly<Record<string, string>> = {
  RecordVoiceAiMetrics:
    'Client-measured latency samples, posted in batches as calls run: telemetry with no effect on access or data, at call volume',
};

const atLeast = (role: Role | undefined, floor: Role) => role !== undefined && ROLES.indexOf(role) >= ROLES.indexOf(floor);

/**
 * The rule for "privileged": every route that changes something (not GET) and is open only to the
 * operator, the project API key or a moderator and above, plus {@link SENSITIVE_USER_ROUTES}, less
 * {@link UNAUDITED_ROUTES}. Each must carry an `audit` entry (test/unit/audit-coverage.test.ts fails
 * a route that lacks one; test/e2e/audit-coverage.test.ts drives each and reads its event back).
 */
export function isPrivilegedRoute(route: Pick<HttpRoute, 'id' | 'method' | 'auth' | 'minRole'>): boolean {
  if (route.id in UNAUDITED_ROUTES) return false;
  if (SENSITIVE_USER_ROUTES.includes(route.id)) return true;
  if (route.method === 'GET') return false;
  return route.auth === 'operator' || route.auth === 'apiKey' || atLeast(route.minRole, 'moderator');
}

/** The audit log of privileged actions, and the marketplace's audit results. */
export const audit: Area = {
  id: 'Audit',
  summary: 'The audit log of privileged actions and the marketplace audit callback',
  httpRoutes: [
    {
      id: 'ListAuditEvents',
      method: 'GET',
      path: '/admin/audit/events',
      handler: 'http/audit/list-audit-events.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read'],
      summary: "The project's audit events, newest first, a page at a time",
    },
    {
      id: 'RecordMarketplaceAuditResult',
      method: 'POST',
      path: '/internal/marketplace/audit-result',
      handler: 'http/audit/record-marketplace-result.ts',
      // The marketplace signs with the shared `marketplace-signing` secret (X-Service-Signature).
      auth: 'none',
      // One caller for every tenant: count what it refuses (forged or stale signatures) per address,
      // never the marketplace's genuine results.
      rateLimit: {
        bucket: 'marketplace-audit',
        per: 'ip',
        counts: 'refusals',
        setting: 'RATE_LIMIT_MARKETPLACE_REFUSALS_PER_IP_PER_MINUTE',
      },
      bindings: ['table:read', 'table:write', 'secret:marketplace-signing'],
      summary: "Store a marketplace audit result for a project's app, agent or bridge (HMAC-signed), with its audit event",
    },
  ],
};
