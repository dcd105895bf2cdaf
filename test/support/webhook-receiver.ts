import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real webhook endpoint for end-to-end tests: a `node:http` server on 127.0.0.1 with a free port.
 * It records every request (raw body, headers, arrival time) and checks each signature with its
 * own HMAC code, never the service's, so a signing bug cannot hide behind a shared helper.
 */

/** How the receiver answers: 2xx, 500, or never (the caller's timeout fires). */
export type ReceiverBehaviour = 'ok' | 'error' | 'hang';

export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The body exactly as sent; the signature covers these bytes. */
  readonly rawBody: string;
  /** `Date.now()` when the body was complete. */
  readonly receivedAt: number;
  /** `X-Service-Signature` checked against the secret known at arrival; `undefined` without a secret. */
  readonly signatureValid: boolean | undefined;
  /**
   * `X-Service-Signature-V2` checked the way docs/api.md tells receivers to: HMAC over
   * `<X-Service-Timestamp>.<X-Service-Delivery-Id>.<raw body>`, and the timestamp within 300 s of
   * arrival; `undefined` without a secret.
   */
  readonly timestampedSignatureValid: boolean | undefined;
}

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hook`. */
  readonly url: string;
  readonly requests: readonly ReceivedRequest[];
  behaviour: ReceiverBehaviour;
  /** Status of an `ok` answer. @default 200 */
  okStatus: number;
  /** The webhook secret, once registration has revealed it. */
  secret: string | undefined;
  /** Resolves with the requests once at least `count` arrived; rejects after `timeoutMs`. */
  waitForRequests(count: number, timeoutMs?: number): Promise<readonly ReceivedRequest[]>;
  close(): Promise<void>;
}

/** Lowercase hex HMAC-SHA256 of the raw body: the receiver's own implementation of the spec rule. */
export const hmacSha256Hex = (secret: string, rawBody: string) =>
  createHmac('sha256', secret).update(Buffer.from(rawBody, 'utf8')).digest('hex');

/** Constant-time comparison of a received signature with the expected one; anything but 64 lowercase hex is invalid. */
export function receiverAcceptsSignature(secret: string, rawBody: string, signature: string | string[] | undefined): boolean {
  if (typeof signature !== 'string' || !/^[0-9a-f]{64}$/.test(signature)) return false;
  return timingSafeEqual(Buffer.from(hmacSha256Hex(secret, rawBody), 'hex'), Buffer.from(signature, 'hex'));
}

/** The receiver's own check of the timestamped signature, replay window included. */
export function receiverAcceptsTimestampedSignature(
  secret: string,
  rawBody: string,
  headers: IncomingHttpHeaders,
  nowSeconds = Math.floor(Date.now() / 1000),
): boolean {
  const timestamp = headers['x-service-timestamp'];
  const deliveryId = headers['x-service-delivery-id'];
  if (typeof timestamp !== 'string' || !/^\d+$/.test(timestamp) || typeof deliveryId !== 'string') return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > 300) return false;
  return receiverAcceptsSignature(secret, `${timestamp}.${deliveryId}.${rawBody}`, headers['x-service-signature-v2']);
}

export async function startWebhookReceiver(options: { behaviour?: ReceiverBehaviour; secret?: string } = {}): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const waiters = new Set<() => void>();
  const hanging = new Set<ServerResponse>();

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      requests.push({
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        rawBody,
        receivedAt: Date.now(),
        signatureValid:
          receiver.secret === undefined
            ? undefined
            : receiverAcceptsSignature(receiver.secret, rawBody, request.headers['x-service-signature']),
        timestampedSignatureValid:
          receiver.secret === undefined ? undefined : receiverAcceptsTimestampedSignature(receiver.secret, rawBody, request.headers),
      });
      for (const wake of waiters) wake();
      if (receiver.behaviour === 'hang') {
        // Never answer; the sender's timeout must end the attempt.
        hanging.add(response);
        response.on('close', () => hanging.delete(response));
        return;
      }
      const status = receiver.behaviour === 'ok' ? receiver.okStatus : 500;
      response.writeHead(status, { 'content-type': 'text/plain' });
      response.end(status === 204 ? undefined : `status ${status}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}/hook`,
    requests,
    behaviour: options.behaviour ?? 'ok',
    okStatus: 200,
    secret: options.secret,
    waitForRequests(count, timeoutMs = 10_000) {
      if (requests.length >= count) return Promise.resolve([...requests]);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver ${port} got ${requests.length} of ${count} requests within ${timeoutMs} ms`));
        }, timeoutMs);
        const check = () => {
          if (requests.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve([...requests]);
        };
        waiters.add(check);
      });
    },
    async close() {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}

/** A loopback URL on which nothing listens: a port the system just handed out and that was closed again. */
export async function unreachableUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/hook`;
}

/** Polls `probe` until it returns something truthy; throws with `what` after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 15_000,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
