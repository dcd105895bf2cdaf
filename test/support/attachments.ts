import { randomBytes } from 'node:crypto';
import { type ApiResponse, readAnswer, runtime } from './api';

/** A 1×1 transparent PNG, then `padding` random bytes (PNG readers stop at IEND; the sniffer reads the signature). */
export function pngBytes(padding = 0): Buffer {
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
  return Buffer.concat([png, randomBytes(padding)]);
}

/** The start of a JPEG (SOI, JFIF APP0) and random bytes: what a sniffer reads as image/jpeg. */
export const jpegBytes = () =>
  Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01]), randomBytes(200)]);

export const pdfBytes = () => Buffer.from(`%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\n% ${randomBytes(8).toString('hex')}\n%%EOF\n`);

/** A PCM WAV file of `seconds` of silence at 8 kHz, 8-bit mono: its header says how long it lasts. */
export function wavBytes(seconds: number): Buffer {
  const samples = Math.round(8000 * seconds);
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + samples, 4);
  header.write('WAVE', 8);
  header.write('fmt ', 12);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(8000, 24);
  header.writeUInt32LE(8000, 28);
  header.writeUInt16LE(1, 32);
  header.writeUInt16LE(8, 34);
  header.write('data', 36);
  header.writeUInt32LE(samples, 40);
  // 8-bit PCM silence is 128; a little noise so two recordings differ.
  const data = Buffer.alloc(samples, 128);
  randomBytes(16).copy(data, 0);
  return Buffer.concat([header, data]);
}

/** A `multipart/form-data` body with one file part (and text fields), as a browser's FormData sends it. */
export function multipartBody(
  file: { readonly bytes: Buffer; readonly contentType: string; readonly filename: string; readonly field?: string },
  fields: Record<string, string> = {},
  extraFiles: number = 0,
): { body: Buffer; contentType: string } {
  const boundary = `----test${randomBytes(8).toString('hex')}`;
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  for (let index = 0; index <= extraFiles; index++) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.field ?? 'file'}"; filename="${file.filename}"\r\nContent-Type: ${file.contentType}\r\n\r\n`,
      ),
      file.bytes,
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** A request with a binary body to a runtime's gateway; JSON answers parsed, redirects not followed. */
export async function sendBytes(
  path: string,
  body: Buffer,
  options: {
    readonly token?: string;
    readonly apiKey?: string;
    readonly contentType?: string;
    readonly baseUrl?: string;
    readonly method?: string;
    readonly headers?: Record<string, string>;
  } = {},
): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey) headers['x-service-api-key'] = options.apiKey;
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.contentType) headers['content-type'] = options.contentType;
  const response = await fetch(`${options.baseUrl ?? runtime().baseUrl}${path}`, {
    method: options.method ?? 'POST',
    headers,
    body: new Uint8Array(body),
    redirect: 'manual',
  });
  return readAnswer(response);
}

/** Uploads raw bytes with their type (201 expected by the caller). */
export const upload = (token: string, bytes: Buffer, contentType: string, options: { baseUrl?: string; filename?: string } = {}) =>
  sendBytes(`/upload${options.filename ? `?filename=${encodeURIComponent(options.filename)}` : ''}`, bytes, {
    token,
    contentType,
    baseUrl: options.baseUrl,
  });

/** Follows an attachment link as a browser does: the service's redirect, then the presigned URL. */
export async function download(url: string): Promise<{ redirect: Response; file: Response; bytes: Buffer }> {
  const redirect = await fetch(url, { redirect: 'manual' });
  const location = redirect.headers.get('location');
  if (redirect.status !== 302 || !location) throw new Error(`no redirect from ${url}: ${redirect.status} ${await redirect.text()}`);
  const file = await fetch(location);
  return { redirect, file, bytes: Buffer.from(await file.arrayBuffer()) };
}
