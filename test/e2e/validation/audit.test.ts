import { beforeAll } from 'vitest';
import { uniqueId } from '../../support/api';
import { marketplaceResultText, marketplaceSignature } from '../../support/marketplace';
import {
  createValidationProject,
  describeValidationMatrix,
  type RouteRequests,
  type ValidationProject,
} from '../../support/matrices/validation-driver';

/**
 * Bad input to the audit routes; the checks common to every route are the matrix's
 * (`validation-driver.ts`). The marketplace callback verifies the raw bytes before it parses them,
 * so its valid request is signed bytes; its signed bad bodies and bad signatures are
 * test/e2e/audit.test.ts's, and `limit`/`cursor` bounds of the list too.
 */

let fixture: ValidationProject;
/** The body the next marketplace request sends: the signature (`auth`) is made over it before the bytes (`raw`) are read. */
let pending: string | undefined;
const nextText = () => {
  pending ??= marketplaceResultText(fixture.project.projectId, uniqueId('agt'));
  return pending;
};

beforeAll(async () => {
  fixture = await createValidationProject('validation-audit');
});

const requests: RouteRequests = {
  ListAuditEvents: { path: () => '/admin/audit/events?limit=10', auth: () => ({ token: fixture.adminToken }), success: 200 },
  RecordMarketplaceAuditResult: {
    path: () => '/internal/marketplace/audit-result',
    auth: () => ({ headers: { 'x-service-signature': marketplaceSignature(nextText()) } }),
    raw: () => {
      const text = nextText();
      pending = undefined;
      return { bytes: Buffer.from(text), contentType: 'application/json' };
    },
    success: 201,
  },
};

describeValidationMatrix('Audit', requests, {});
