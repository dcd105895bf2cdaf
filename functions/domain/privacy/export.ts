import type { UserPrincipal } from '#shared/auth';
import { config } from '#shared/config';
import { subjectRef } from '#shared/db/privacy-erasure';
import { exportChunks, putExportChunks } from '#shared/db/privacy-export';
import { NotFoundError } from '#shared/errors';
import { newId } from '#shared/ids';
import { privacyAreas } from './areas';
import { openExportLink, signExportLink } from './export-links';
import { gdprSubject } from './subject';

/** The export's JSON is stored in chunks of this many UTF-16 code units: at most 300 KB of UTF-8 each. */
const CHUNK_CODE_UNITS = 100_000;
/** Chunks per download part: a part's body stays near 2.4 MB, well below Lambda's 6 MB answer once escaped. */
export const CHUNKS_PER_PART = 8;

export type ExportAnswer =
  | { readonly kind: 'inline'; readonly filename: string; readonly json: string }
  | {
      readonly kind: 'staged';
      readonly body: { status: 'staged'; exportId: string; bytes: number; expiresAt: string; parts: string[] };
    };

export const DOWNLOAD_PATH = '/gdpr/export/download';

/** Everything the project holds about the subject, one section per area (`privacyAreas`). */
export async function buildExport(projectId: string, userId: string): Promise<Record<string, unknown>> {
  const sections = await Promise.all(
    privacyAreas.flatMap((area) =>
      area.export ? [area.export({ projectId, userId, actor: userId }).then((data) => [area.id, data] as const)] : [],
    ),
  );
  return {
    subject: { projectId, userId },
    exportedAt: new Date().toISOString(),
    format: 'chat-gdpr-export/1',
    ...Object.fromEntries(sections),
  };
}

/** Cuts text into chunks, never between the two halves of a surrogate pair. */
function chunksOf(text: string): string[] {
  const chunks: string[] = [];
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + CHUNK_CODE_UNITS, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end--;
    chunks.push(text.slice(start, end));
    start = end;
  }
  return chunks;
}

/**
 * `GET /gdpr/export`: the subject's export as the answer's attachment, or, above
 * `GDPR_EXPORT_INLINE_MAX_BYTES`, staged in the table and answered with signed download links
 * that expire after `GDPR_EXPORT_LINK_TTL_SECONDS`: the parts, fetched in order and joined, are
 * the same JSON document.
 */
export async function exportTokenSubject(principal: UserPrincipal): Promise<ExportAnswer> {
  const subject = gdprSubject(principal);
  const json = JSON.stringify(await buildExport(principal.projectId, subject), null, 2);
  const exportId = newId('ex');
  const bytes = Buffer.byteLength(json);
  if (bytes <= config.GDPR_EXPORT_INLINE_MAX_BYTES) return { kind: 'inline', filename: `gdpr-export-${exportId}.json`, json };
  const expires = Math.floor(Date.now() / 1000) + config.GDPR_EXPORT_LINK_TTL_SECONDS;
  const chunks = chunksOf(json);
  await putExportChunks(principal.projectId, subject, exportId, chunks, expires + 60);
  const token = await signExportLink({
    projectId: principal.projectId,
    subjectRef: subjectRef(principal.projectId, subject),
    exportId,
    expires,
  });
  const partCount = Math.ceil(chunks.length / CHUNKS_PER_PART);
  return {
    kind: 'staged',
    body: {
      status: 'staged',
      exportId,
      bytes,
      expiresAt: new Date(expires * 1000).toISOString(),
      parts: Array.from({ length: partCount }, (_, part) => `${DOWNLOAD_PATH}?token=${token}&part=${part}`),
    },
  };
}

/** `GET /gdpr/export/download`: one part of a staged export, by its signed link. */
export async function downloadExportPart(token: string, part: number): Promise<{ filename: string; text: string }> {
  const link = await openExportLink(token);
  const chunks = await exportChunks(link.projectId, link.subjectRef, link.exportId, part * CHUNKS_PER_PART, CHUNKS_PER_PART);
  if (chunks.length === 0)
    throw new NotFoundError('export_not_found', 'The staged export is gone (expired, or its subject erased), or has no such part');
  return { filename: `gdpr-export-${link.exportId}.part-${part}.json`, text: chunks.map((chunk) => chunk.data).join('') };
}
