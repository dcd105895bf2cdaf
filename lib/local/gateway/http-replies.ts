import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyResultV2 } from 'aws-lambda';
import { withoutCorsHeaders } from './cors';

/** API Gateway's payload limit for HTTP APIs. */
export const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
}

/** The CORS preflight: API Gateway answers it itself, no route runs (`headers` from `./cors`). */
export function answerPreflight(response: ServerResponse, headers: Record<string, string>): void {
  response.writeHead(204, headers);
  response.end();
}

/** The whole body, or `too_large` past API Gateway's limit (what follows the limit is read but not kept). */
export function readBody(request: IncomingMessage): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_PAYLOAD_BYTES) chunks.push(chunk);
    });
    request.on('end', () => resolve(size > MAX_PAYLOAD_BYTES ? 'too_large' : Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

/**
 * A Lambda proxy result (payload format 2.0) as API Gateway turns it into an HTTP answer. The
 * gateway's CORS headers were set on `response` before the route ran (`./cors`).
 */
export function writeLambdaResult(response: ServerResponse, result: APIGatewayProxyResultV2): void {
  if (typeof result === 'string' || result === undefined || result === null) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(typeof result === 'string' ? result : '');
    return;
  }
  const headers = withoutCorsHeaders(result.headers ?? {});
  const setCookies = result.cookies?.length ? { 'set-cookie': result.cookies } : {};
  response.writeHead(result.statusCode ?? 200, { ...headers, ...setCookies } as Record<string, string>);
  response.end(result.body ? Buffer.from(result.body, result.isBase64Encoded ? 'base64' : 'utf8') : undefined);
}

/** Answers on a raw socket (an upgrade request, a request Node could not parse) with an HTTP error and a JSON body, as every refusal has. */
export function refuseOnSocket(
  socket: Duplex,
  status: number,
  body: string | object,
  headers: Record<string, string | number | boolean> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const headerLines = Object.entries(headers)
    .filter(([name]) => !/^(content-length|connection|content-type)$/i.test(name))
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Refused'}\r\nContent-Type: application/json\r\n${headerLines}Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
  );
}
