import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The AWS JSON protocol as the local stand-ins speak it to the real SDK clients: the operation in
 * `X-Amz-Target`, the body JSON, errors named in `X-Amzn-ErrorType` and `__type`.
 */
export function sendAwsJson(response: ServerResponse, version: '1.0' | '1.1', status: number, body: unknown, errorType?: string): void {
  response.writeHead(status, {
    'content-type': `application/x-amz-json-${version}`,
    ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
  });
  response.end(JSON.stringify(errorType ? { __type: errorType, message: (body as { message?: string }).message } : body));
}

export async function readAwsJson(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
}
