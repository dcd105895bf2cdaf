import { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyResultV2 } from 'aws-lambda';

/** API Gateway's payload limit for HTTP APIs. */
export const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024;

/** Every answer carries them: browsers on other origins (the embed widget, the console) call the API. */
export const CORS_HEADERS = {
  'access-control-allow-origin': '*',
  'access-control-allow-headers': 'authorization,content-type,x-service-api-key,x-service-operator-key,x-trace-id,x-service-project-id',
  'access-control-allow-methods': 'GET,POST,PUT,PATCH,DELETE,OPTIONS',
  'access-control-expose-headers': 'retry-after,x-trace-id',
};

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...CORS_HEADERS, ...headers });
  response.end(JSON.stringify(body));
}

/** The CORS preflight: API Gateway answers it itself, no route runs. */
export function answerPreflight(response: ServerResponse): void {
  response.writeHead(204, CORS_HEADERS);
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

/** A Lambda proxy result (payload format 2.0) as API Gateway turns it into an HTTP answer. */
export function writeLambdaResult(response: ServerResponse, result: APIGatewayProxyResultV2): void {
  if (typeof result === 'string' || result === undefined || result === null) {
    response.writeHead(200, { 'content-type': 'application/json', ...CORS_HEADERS });
    response.end(typeof result === 'string' ? result : '');
    return;
  }
  const headers: Record<string, string | number | boolean> = { ...CORS_HEADERS, ...(result.headers ?? {}) };
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
