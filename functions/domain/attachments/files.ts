import { createHash, randomBytes } from 'node:crypto';
import { fileTypeFromBuffer } from 'file-type';
import { bucketKey } from '#domain/attachments/links';
import { attachmentsBucket, putObject } from '#shared/attachments-bucket';
import type { UserPrincipal } from '#shared/auth';
import { bound } from '#shared/bindings';
import { config } from '#shared/config';
import { BadRequestError, HttpError } from '#shared/errors';

/** A file as the client sent it: the bytes, the type it declared, and its name when it gave one. */
export interface UploadInput {
  readonly bytes: Buffer;
  /** `Content-Type` of the raw body, or of the multipart file part. */
  readonly declaredType: string | undefined;
  readonly filename?: string;
}

export interface StoredUpload {
  /** The public link: `<API base URL>/attachments/<project>/<owner ref>/<object id>/<filename>`. */
  readonly url: string;
  readonly path: string;
  /** The object's key in the bucket (the path without `/attachments/`). */
  readonly key: string;
  readonly contentType: string;
  readonly size: number;
  readonly filename: string;
}

/** Types whose bytes have no signature to sniff: they must be UTF-8 text instead. */
const TEXT_TYPES = new Set(['text/plain', 'text/csv', 'text/markdown']);

/**
 * What a sniffed signature may say for a declared type: containers that serve audio and video alike
 * (WebM, MP4, Ogg) sniff as either, and WAV has several names.
 */
const SNIFFED_ALIASES: Readonly<Record<string, readonly string[]>> = {
  'audio/webm': ['audio/webm', 'video/webm'],
  'audio/mp4': ['audio/mp4', 'audio/x-m4a', 'audio/m4a', 'video/mp4'],
  'audio/ogg': ['audio/ogg', 'audio/opus', 'audio/ogg; codecs=opus'],
  'audio/wav': ['audio/wav', 'audio/x-wav', 'audio/vnd.wave', 'audio/wave'],
  'audio/mpeg': ['audio/mpeg', 'audio/mp3'],
};

/** The media type without its parameters, lower-cased: `Text/Plain; charset=utf-8` → `text/plain`. */
export const mediaTypeOf = (contentType: string | undefined) => (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';

/**
 * A file name safe in a URL path, an S3 key and a `Content-Disposition` header: its last path
 * segment, letters, digits, `.`, `_` and `-` only (anything else becomes `_`), no leading dot, at
 * most 100 characters keeping the extension; `file` when nothing is left.
 */
export function sanitizeFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[\\/]/).pop() ?? '';
  let safe = base
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9._-]+/g, '_')
    .replace(/^[._]+/, '')
    .replace(/_+/g, '_');
  if (safe.length > 100) {
    const dot = safe.lastIndexOf('.');
    const extension = dot > 0 && safe.length - dot <= 10 ? safe.slice(dot) : '';
    safe = safe.slice(0, 100 - extension.length) + extension;
  }
  return safe === '' ? 'file' : safe;
}

const EXTENSIONS: Readonly<Record<string, string>> = {
  'image/png': 'png',
  'image/jpeg': 'jpg',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'application/pdf': 'pdf',
  'text/plain': 'txt',
  'text/csv': 'csv',
  'text/markdown': 'md',
  'audio/mpeg': 'mp3',
  'audio/mp4': 'm4a',
  'audio/ogg': 'ogg',
  'audio/webm': 'webm',
  'audio/wav': 'wav',
};

/** The owner's part of a key: a digest of (project, user), so a user's uploads share a prefix without naming the user. */
export const ownerRefOf = (projectId: string, userId: string) =>
  createHash('sha256').update(`attachment-owner\u0000${projectId}\u0000${userId}`).digest().subarray(0, 16).toString('base64url');

/**
 * Checks an upload and answers the type to store it with: not empty (400 `empty_upload`), within
 * `ATTACHMENTS_MAX_BYTES` (413 `upload_too_large`), a declared type of the allow-list (415
 * `unsupported_media_type`; `audioOnly` narrows it to `audio/*`), and bytes that are what the type
 * says (415 `content_type_mismatch`): a binary type's signature must sniff as that type, and text
 * must have no signature, be valid UTF-8 and hold no NUL.
 */
export async function checkUpload(input: UploadInput, options: { audioOnly?: boolean } = {}): Promise<string> {
  const { bytes } = input;
  if (bytes.length === 0) throw new BadRequestError('The upload is empty: send the file as the body', undefined, 'empty_upload');
  if (bytes.length > config.ATTACHMENTS_MAX_BYTES) {
    throw new HttpError(
      413,
      'upload_too_large',
      `Files are limited to ${config.ATTACHMENTS_MAX_BYTES} bytes; this one has ${bytes.length}`,
    );
  }
  const declared = mediaTypeOf(input.declaredType);
  const allowed = config.ATTACHMENTS_ALLOWED_TYPES.filter((type) => !options.audioOnly || type.startsWith('audio/'));
  if (!allowed.includes(declared)) {
    throw new HttpError(
      415,
      'unsupported_media_type',
      `Content-Type ${declared || '(none)'} is not accepted${options.audioOnly ? ' for a voice message' : ''}; accepted: ${allowed.join(', ')}`,
    );
  }
  const sniffed = (await fileTypeFromBuffer(bytes))?.mime;
  if (TEXT_TYPES.has(declared)) {
    if (sniffed !== undefined || !isUtf8Text(bytes)) {
      throw new HttpError(
        415,
        'content_type_mismatch',
        `The bytes are not UTF-8 text, as ${declared} declares${sniffed ? ` (they read as ${sniffed})` : ''}`,
      );
    }
    return `${declared}; charset=utf-8`;
  }
  const accepted = SNIFFED_ALIASES[declared] ?? [declared];
  if (sniffed === undefined || !accepted.includes(sniffed)) {
    throw new HttpError(
      415,
      'content_type_mismatch',
      `The bytes are not ${declared}, as the Content-Type declares (they read as ${sniffed ?? 'unknown'})`,
    );
  }
  return declared;
}

function isUtf8Text(bytes: Buffer): boolean {
  if (bytes.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * Stores a checked upload under a fresh key of the caller's project and answers its link. The key
 * is `<project>/<owner ref>/<object id>/<filename>`, the object id 128 random bits: a link can be
 * shared, never guessed or derived from another (docs/api.md, "Attachments").
 */
export async function storeUpload(
  principal: UserPrincipal,
  input: UploadInput,
  options: { audioOnly?: boolean } = {},
): Promise<StoredUpload> {
  attachmentsBucket();
  const contentType = await checkUpload(input, options);
  const declared = mediaTypeOf(contentType);
  let filename = sanitizeFilename(input.filename);
  if (!input.filename) filename = `upload.${EXTENSIONS[declared] ?? 'bin'}`;
  const ref = {
    projectId: principal.projectId,
    ownerRef: ownerRefOf(principal.projectId, principal.userId),
    objectId: randomBytes(16).toString('base64url'),
    filename,
  };
  const key = bucketKey(ref);
  await putObject(key, input.bytes, contentType);
  const path = `/attachments/${key}`;
  return { url: `${bound('link:api').replace(/\/+$/, '')}${path}`, path, key, contentType, size: input.bytes.length, filename };
}
