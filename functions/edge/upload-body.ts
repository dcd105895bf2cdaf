import busboy from 'busboy';
import { BadRequestError } from '#shared/errors';

/** A file from a request body, and the text fields a multipart body carried beside it. */
export interface UploadBody {
  readonly bytes: Buffer;
  readonly declaredType: string | undefined;
  readonly filename?: string;
  readonly fields: Readonly<Record<string, string>>;
}

const invalid = (message: string) => new BadRequestError(message, undefined, 'invalid_multipart');

/**
 * The file of an upload request: a `multipart/form-data` body's one file part (browsers' forms and
 * `FormData`), with its own type and name and the text fields beside it; any other body is the file
 * itself, typed by the request's `Content-Type` and named by `filename` when given. `maxBytes` stops
 * reading a part past the limit (the check itself is the caller's, on the length it sees).
 */
export function readUploadBody(
  headers: Readonly<Record<string, string | undefined>>,
  body: Buffer,
  options: { readonly maxBytes: number; readonly filename?: string },
): Promise<UploadBody> {
  const contentType = headers['content-type'];
  if (!/^multipart\/form-data/i.test(contentType ?? '')) {
    return Promise.resolve({
      bytes: body,
      declaredType: contentType,
      ...(options.filename ? { filename: options.filename } : {}),
      fields: {},
    });
  }
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType as string },
        limits: { files: 2, fields: 10, fieldSize: 4096, parts: 12, fileSize: options.maxBytes + 1 },
      });
    } catch {
      return reject(invalid('The multipart body has no boundary in its Content-Type'));
    }
    const fields: Record<string, string> = {};
    const files: { bytes: Buffer; type: string; filename: string | undefined }[] = [];
    const pending: Promise<void>[] = [];
    parser.on('field', (name, value) => {
      fields[name] = value;
    });
    parser.on('file', (_name, stream, info) => {
      const chunks: Buffer[] = [];
      pending.push(
        new Promise((done) => {
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('close', () => {
            files.push({ bytes: Buffer.concat(chunks), type: info.mimeType, filename: info.filename });
            done();
          });
        }),
      );
    });
    parser.on('error', () => reject(invalid('The multipart body does not parse')));
    parser.on('close', () => {
      Promise.all(pending).then(() => {
        const [file, ...more] = files;
        if (!file || more.length > 0) return reject(invalid(`A multipart upload carries one file part; this one has ${files.length}`));
        resolve({ bytes: file.bytes, declaredType: file.type, ...(file.filename ? { filename: file.filename } : {}), fields });
      }, reject);
    });
    parser.end(body);
  });
}
