import { createHmac } from 'node:crypto';
import { MARKETPLACE_AUDIT_SECRET } from './global-setup';

/** `X-Service-Signature` as the marketplace computes it: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const marketplaceSignature = (text: string, t: number | string = Math.floor(Date.now() / 1000), secret = MARKETPLACE_AUDIT_SECRET) =>
  `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${text}`).digest('hex')}`;

/** A result body the callback stores: a fresh subject each time, so every one is new. */
export const marketplaceResultText = (projectId: string, subjectId: string, overrides: Record<string, unknown> = {}) =>
  JSON.stringify({
    projectId,
    subject: { kind: 'agent', id: subjectId },
    result: 'passed',
    findings: [],
    auditedAt: new Date().toISOString(),
    ...overrides,
  });
