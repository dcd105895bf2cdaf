import { ownerRefOf } from '#domain/attachments/files';
import { ownerPrefix } from '#domain/attachments/links';
import { deleteObjects, listObjects } from '#shared/attachments-bucket';
import { bucketDefinitions } from '#wiring/bindings';

/** A deployment without the bucket holds no uploads: nothing to list or erase (and no 503). */
const bucketBound = () => Boolean(process.env[bucketDefinitions.attachments.variable]);

/** The subject's uploads in the project (files and voice recordings): their paths under `/attachments/`, sizes and times. */
export async function uploadsOfUser(projectId: string, userId: string) {
  if (!bucketBound()) return [];
  const objects = await listObjects(ownerPrefix(projectId, ownerRefOf(projectId, userId)));
  return objects.map((object) => ({ path: `/attachments/${object.key}`, size: object.size, uploadedAt: object.lastModified ?? null }));
}

/** Deletes every upload of the subject in the project; their links answer 404 from then on. */
export async function eraseUploadsOfUser(projectId: string, userId: string): Promise<number> {
  if (!bucketBound()) return 0;
  const objects = await listObjects(ownerPrefix(projectId, ownerRefOf(projectId, userId)));
  return deleteObjects(objects.map((object) => object.key));
}
