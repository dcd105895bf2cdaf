import { createHmac } from 'node:crypto';
import { constantTimeEqual, loadProject, signingSecretOf } from '#shared/auth';
import { ForbiddenError } from '#shared/errors';
import { PROJECT_ID_PATTERN } from '#shared/ids';

/** What a download link names: a staged export of one subject (by reference) of one project, until `expires`. */
export interface ExportLink {
  readonly projectId: string;
  readonly subjectRef: string;
  readonly exportId: string;
  /** Epoch seconds. */
  readonly expires: number;
}

const invalid = () =>
  new ForbiddenError('The export link is malformed, altered or expired: ask GET /gdpr/export again', 'export_link_invalid');

/**
 * Keyed with the project's signing secret (as user tokens are), so only this service makes links,
 * rotating the secret voids them, and one project's link never opens another's export.
 */
async function mac(payload: string, projectId: string): Promise<string> {
  const project = await loadProject(projectId);
  if (!project) throw invalid();
  return createHmac('sha256', await signingSecretOf(project))
    .update(`gdpr-export\u0000${payload}`)
    .digest('base64url');
}

/** `<payload>.<mac>`, both base64url: the link's `token` query parameter. */
export async function signExportLink(link: ExportLink): Promise<string> {
  const payload = Buffer.from(JSON.stringify([link.projectId, link.subjectRef, link.exportId, link.expires])).toString('base64url');
  return `${payload}.${await mac(payload, link.projectId)}`;
}

/** The link a token names, if its MAC verifies and it has not expired; 403 `export_link_invalid` otherwise. */
export async function openExportLink(token: string): Promise<ExportLink> {
  const [payload, signature, ...rest] = token.split('.');
  if (!payload || !signature || rest.length > 0) throw invalid();
  let fields: unknown;
  try {
    fields = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(fields) || fields.length !== 4) throw invalid();
  const [projectId, subjectRef, exportId, expires] = fields as unknown[];
  if (typeof projectId !== 'string' || !PROJECT_ID_PATTERN.test(projectId)) throw invalid();
  if (typeof subjectRef !== 'string' || typeof exportId !== 'string' || typeof expires !== 'number') throw invalid();
  if (!constantTimeEqual(signature, await mac(payload, projectId))) throw invalid();
  if (expires * 1000 <= Date.now()) throw invalid();
  return { projectId, subjectRef, exportId, expires };
}
