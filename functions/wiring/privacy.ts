import { messageWriter } from './messages.ts';
import type { Area, RateLimit } from './types.ts';

/**
 * Export and erasure both walk every area of a subject's data (a Query or more per area, an
 * erasure a write per item): one small budget per calling user for the two.
 */
const gdprLimit: RateLimit = { bucket: 'gdpr', per: 'user', setting: 'RATE_LIMIT_GDPR_PER_MINUTE' };

/** GDPR: export and erasure of everything a project holds about a subject (the JWT `sub`). */
export const privacy: Area = {
  id: 'Privacy',
  summary: "GDPR export and erasure of a subject's data within a project",
  httpRoutes: [
    {
      id: 'ExportSubjectData',
      method: 'GET',
      path: '/gdpr/export',
      handler: 'http/privacy/export-subject.ts',
      auth: 'user',
      minRole: 'member',
      rateLimit: gdprLimit,
      // The subject's uploads are listed from the attachments bucket.
      bindings: ['table:read', 'table:write', 'bucket:attachments:read'],
      timeoutSeconds: 29,
      audit: { action: 'gdpr.export', subject: true },
      summary: "The token subject's data as a JSON attachment, or signed links to its staged parts when large (admins: any subject)",
    },
    {
      id: 'DownloadSubjectExport',
      method: 'GET',
      path: '/gdpr/export/download',
      handler: 'http/privacy/download-export.ts',
      // The signed, expiring token in the link is the credential: a browser follows it as it is.
      auth: 'none',
      bindings: ['table:read', 'secret:signing-key'],
      summary: 'One part of a staged GDPR export, by its signed short-lived link',
    },
    {
      id: 'EraseSubject',
      method: 'DELETE',
      path: '/gdpr/delete',
      handler: 'http/privacy/erase-subject.ts',
      auth: 'user',
      minRole: 'admin',
      rateLimit: gdprLimit,
      // Closes the subject's sockets (the management API) and ends memberships with their events.
      bindings: [...messageWriter, 'bucket:attachments:write'],
      timeoutSeconds: 29,
      audit: { action: 'gdpr.delete', subject: true },
      summary: "Erase the token subject's data within the project (resumable, idempotent); owner or admin",
    },
  ],
};
