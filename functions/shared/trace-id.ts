import { randomUUID } from 'node:crypto';

/**
 * What a client may send as `X-Trace-Id`: up to 128 of the characters trace ids are written in
 * (UUIDs, W3C `traceparent`, X-Ray ids). It is echoed in a response header and written into every
 * log line, so anything longer or stranger (a megabyte, a newline, a forged JSON fragment) is not
 * taken: the request gets its own id instead.
 */
const CLIENT_TRACE_ID = /^[A-Za-z0-9._:=-]{1,128}$/;

/** The request's trace id: the client's `X-Trace-Id` when it is well formed, else the gateway's request id. */
export function traceIdOf(clientValue: string | undefined, requestId: string | undefined): string {
  if (clientValue !== undefined && CLIENT_TRACE_ID.test(clientValue)) return clientValue;
  return requestId ?? randomUUID();
}
