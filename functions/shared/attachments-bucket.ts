import {
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { sdkClientDefaults } from '#shared/aws-clients';
import { NotConfiguredError } from '#shared/errors';
import { bucketDefinitions } from '#wiring/bindings';

/**
 * The attachments bucket, as the functions bound to it (`bucket:attachments:read|write`) reach it.
 * Locally `AWS_ENDPOINT_URL_S3` points the client at the S3 stand-in, which serves buckets by path
 * (`/<bucket>/<key>`), not by host name.
 */
const s3 = new S3Client({
  // Locally a signer that names the run's key and signs nothing (the stand-in checks no signature;
  // hashing each body for SigV4 is CPU AWS's own hosts would not charge to the service), as every client here.
  ...(sdkClientDefaults as Pick<S3ClientConfig, 'signer' | 'logger'>),
  maxAttempts: 3,
  forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL_S3),
  // Objects are put whole (a Buffer, Content-MD5 not needed): no trailing checksums to compute or to check.
  requestChecksumCalculation: 'WHEN_REQUIRED',
  responseChecksumValidation: 'WHEN_REQUIRED',
});

/** The bound bucket's name, or 503 `attachments_not_configured` when the deployment has none. */
export function attachmentsBucket(): string {
  const name = process.env[bucketDefinitions.attachments.variable];
  if (!name) {
    throw new NotConfiguredError(
      'attachments_not_configured',
      'Attachments are not configured on this service: deploy with the attachments bucket (context attachmentsEnabled, docs/operations.md)',
    );
  }
  return name;
}

export interface StoredObject {
  readonly contentType: string;
  readonly size: number;
}

export async function putObject(key: string, bytes: Buffer, contentType: string): Promise<void> {
  await s3.send(new PutObjectCommand({ Bucket: attachmentsBucket(), Key: key, Body: bytes, ContentType: contentType }));
}

/** The object's type and size, `undefined` when there is none. */
export async function headObject(key: string): Promise<StoredObject | undefined> {
  try {
    const head = await s3.send(new HeadObjectCommand({ Bucket: attachmentsBucket(), Key: key }));
    return { contentType: head.ContentType ?? 'application/octet-stream', size: head.ContentLength ?? 0 };
  } catch (error) {
    if (error instanceof S3ServiceException && (error.$metadata.httpStatusCode === 404 || error.name === 'NotFound')) return undefined;
    throw error;
  }
}

/** The object's bytes, `undefined` when there is none. */
export async function getObject(key: string): Promise<Buffer | undefined> {
  try {
    const answer = await s3.send(new GetObjectCommand({ Bucket: attachmentsBucket(), Key: key }));
    return Buffer.from((await answer.Body?.transformToByteArray()) ?? []);
  } catch (error) {
    if (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 404) return undefined;
    throw error;
  }
}

/**
 * A GET URL of the object that works for `expiresInSeconds`, answering with the headers given
 * (S3's `response-content-type` and `response-content-disposition` overrides, signed into the URL).
 */
export function presignedGetUrl(
  key: string,
  expiresInSeconds: number,
  headers: { readonly contentType: string; readonly contentDisposition: string },
): Promise<string> {
  return getSignedUrl(
    s3,
    new GetObjectCommand({
      Bucket: attachmentsBucket(),
      Key: key,
      ResponseContentType: headers.contentType,
      ResponseContentDisposition: headers.contentDisposition,
    }),
    { expiresIn: expiresInSeconds },
  );
}

/** Every object under `prefix`, with its size, a page of 1,000 per request. */
export async function listObjects(prefix: string): Promise<{ key: string; size: number; lastModified?: string }[]> {
  const found: { key: string; size: number; lastModified?: string }[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: attachmentsBucket(), Prefix: prefix, ContinuationToken: token }));
    for (const object of page.Contents ?? []) {
      if (object.Key) found.push({ key: object.Key, size: object.Size ?? 0, lastModified: object.LastModified?.toISOString() });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return found;
}

/** Deletes the objects, 1,000 per request (S3's batch); answers how many it asked to delete. */
export async function deleteObjects(keys: readonly string[]): Promise<number> {
  for (let start = 0; start < keys.length; start += 1000) {
    const batch = keys.slice(start, start + 1000);
    const answer = await s3.send(
      new DeleteObjectsCommand({ Bucket: attachmentsBucket(), Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true } }),
    );
    if (answer.Errors?.length) throw new Error(`S3 kept ${answer.Errors.length} object(s): ${answer.Errors[0]?.Code}`);
  }
  return keys.length;
}
