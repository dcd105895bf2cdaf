import { headObject, presignedGetUrl } from '#shared/attachments-bucket';
import { config } from '#shared/config';
import { NotFoundError } from '#shared/errors';

/** What an attachment link names: the path segments after `/attachments/`, which are the object's key. */
export interface AttachmentRef {
  readonly projectId: string;
  readonly ownerRef: string;
  readonly objectId: string;
  readonly filename: string;
}

export const bucketKey = (ref: AttachmentRef) => `${ref.projectId}/${ref.ownerRef}/${ref.objectId}/${ref.filename}`;

/** A user's uploads in a project share this prefix (GDPR export and erasure list them by it). */
export const ownerPrefix = (projectId: string, ownerRef: string) => `${projectId}/${ownerRef}/`;

/** Types a browser may show inline; everything else downloads (`Content-Disposition: attachment`). */
const INLINE_TYPES = /^(image\/(png|jpeg|gif|webp)|audio\/)/;

/**
 * Where the link's file is: a presigned S3 GET URL valid for `ATTACHMENTS_LINK_TTL_SECONDS`, with the
 * stored type and a disposition signed into it (S3 answers with those headers), or 404
 * `attachment_not_found`. One HEAD request tells a missing object from a present one, so a wrong link
 * gets the service's JSON 404 and not S3's XML.
 */
export async function attachmentLocation(ref: AttachmentRef): Promise<{ url: string; maxAgeSeconds: number }> {
  const key = bucketKey(ref);
  const stored = await headObject(key);
  if (!stored) throw new NotFoundError('attachment_not_found', 'No such attachment');
  const disposition = INLINE_TYPES.test(stored.contentType) ? 'inline' : 'attachment';
  const url = await presignedGetUrl(key, config.ATTACHMENTS_LINK_TTL_SECONDS, {
    contentType: stored.contentType,
    contentDisposition: `${disposition}; filename="${ref.filename}"`,
  });
  // A cached redirect must not outlive the URL it points at.
  return { url, maxAgeSeconds: Math.max(0, config.ATTACHMENTS_LINK_TTL_SECONDS - 60) };
}
