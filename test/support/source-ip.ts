/**
 * Requests from a loopback address of the test's own: all of 127/8 is loopback, and the local gateway
 * takes the caller's address from the socket as API Gateway does, so the per-IP budgets a test spends
 * this way are nobody else's.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { runtime } from './api';

export interface SourcedAnswer {
  readonly status: number;
  readonly retryAfter: string | undefined;
  readonly body: any;
}

/** A loopback address no other test uses. */
export const freshSourceIp = () => `127.${[...randomBytes(3)].map((byte) => Math.max(1, byte % 255)).join('.')}`;

/** `POST <path>` with a JSON body to the shared runtime, leaving from `sourceIp`. */
export function postFrom(sourceIp: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<SourcedAnswer> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const call = request(
      new URL(path, runtime().baseUrl),
      {
        method: 'POST',
        localAddress: sourceIp,
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) },
      },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => {
          text += chunk;
        });
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            retryAfter: response.headers['retry-after'],
            body: text ? JSON.parse(text) : undefined,
          }),
        );
      },
    );
    call.on('error', reject);
    call.end(payload);
  });
}
