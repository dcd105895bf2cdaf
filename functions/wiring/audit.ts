import type { Area, HttpRoute, Role } from './types.ts';
import { ROLES } from './types.ts';

/**
 * Routes a user may call on their own behalf that still touch what an auditor follows: the GDPR
 * export and erasure, a change of a room member's role (adding a member sets it), and setting a
 * user's password (an API key route already, listed for the reader).
 */
export const SENSITIVE_USER_ROUTES: readonly string[] = [
  'ExportSubjectData',
  'EraseSubject',
  'AddRoomMember',
  'RemoveRoomMember',
  'SetUserCredentials',
];

const atLeast = (role: Role | undefined, floor: Role) => role !== undefined && ROLES.indexOf(role) >= ROLES.indexOf(floor);

/**
 * The rule for "privileged": every route that changes something (not GET) and is open only to the
 * operator, the project API key or a moderator and above, plus {@link SENSITIVE_USER_ROUTES}. Each
 * must carry an `audit` entry (test/e2e/audit-coverage.test.ts fails a route that lacks one).
 */
export function isPrivilegedRoute(route: Pick<HttpRoute, 'id' | 'method' | 'auth' | 'minRole'>): boolean {
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
      // The marketplace signs with the shared `marketplace-audit` secret (X-Service-Signature).
      auth: 'none',
      // One caller for every tenant: count what it refuses (forged or stale signatures) per address,
      // never the marketplace's genuine results.
      rateLimit: {
        bucket: 'marketplace-audit',
        per: 'ip',
        counts: 'refusals',
        setting: 'RATE_LIMIT_MARKETPLACE_REFUSALS_PER_IP_PER_MINUTE',
      },
      bindings: ['table:read', 'table:write', 'secret:marketplace-audit'],
      summary: "Store a marketplace audit result for a project's app, agent or bridge (HMAC-signed), with its audit event",
    },
  ],
};
