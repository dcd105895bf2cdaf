import { timingSafeEqual } from 'node:crypto';
import type { Duplex } from 'node:stream';
import { WebSocket } from 'ws';
import type { ConnectionsTransport } from '../../functions/shared/gateway';
import type { InProcessRequest, InProcessResponse } from './in-process-handler';

/** API Gateway's frame limit for WebSocket APIs. */
export const MAX_FRAME_BYTES = 128 * 1024;

/** An open socket as the gateway tracks it. */
export interface SocketEntry {
  readonly socket: WebSocket;
  /** The connection under `socket`, which posted frames are written to whole (see `textFrame`). */
  readonly wire: Duplex;
  readonly connectedAt: number;
  lastActiveAt: number;
  readonly sourceIp: string;
  readonly userAgent: string;
}

/** Management API calls, as CloudWatch would count them on AWS (`postToConnection` is billed per message). */
export interface ManagementStats {
  readonly posts: number;
  readonly gone: number;
  readonly deletes: number;
  /** Calls refused with 429 by injected throttling. */
  readonly throttled: number;
}

/**
 * AWS's failure modes, on demand: a share of posts answered 410 as if the client had vanished, a
 * share of calls throttled (429 `LimitExceededException`), and a random delay of up to `jitterMs`.
 */
export interface ManagementFaults {
  readonly goneRate?: number;
  readonly throttleRate?: number;
  readonly jitterMs?: number;
}

export type ManagementCall =
  | { readonly action: 'post'; readonly connectionId: string; readonly data: Uint8Array }
  | { readonly action: 'delete' | 'get'; readonly connectionId: string };

/** An answer in the management API's terms: the status, the error type it names in a header, a JSON body. */
export interface ManagementAnswer {
  readonly status: number;
  readonly errorType?: string;
  readonly body?: Record<string, unknown>;
}

const refusedWith = (status: number, errorType: string, message: string): ManagementAnswer => ({
  status,
  errorType,
  body: { message },
});
const gone = refusedWith(410, 'GoneException', 'Gone');
/** Shared: a fan-out answers a thousand posts in a row. */
const posted: ManagementAnswer = Object.freeze({ status: 200 });
/** Past API Gateway's frame limit, or a body the gateway would not even read. */
export const payloadTooLarge = refusedWith(413, 'PayloadTooLargeException', 'Payload too large');

/**
 * Why a request is refused, or `undefined` when its SigV4 `Authorization` header names the
 * runtime's access key (the scope after it is not checked: one key, one local region). On AWS this
 * API needs IAM credentials, and room members learn each other's socket ids, so an open one would
 * let any client forge frames or close sockets.
 */
function authorizationRefusal(authorization: string | undefined, accessKeyId: string): ManagementAnswer | undefined {
  if (!authorization) return refusedWith(403, 'ForbiddenException', 'Missing Authentication Token');
  const given = Buffer.from(/^AWS4-HMAC-SHA256 Credential=([^/,\s]+)\//.exec(authorization)?.[1] ?? '');
  const expected = Buffer.from(accessKeyId);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    return refusedWith(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
  }
  return undefined;
}

/** A management API request as it arrives, over HTTP or from an SDK client in this process. */
export interface ManagementRequest {
  readonly method: string;
  /** The path as sent, still percent-encoded: `/@connections/<id>`. */
  readonly path: string;
  readonly authorization: string | undefined;
  readonly body: Uint8Array;
}

/**
 * A server's unmasked, unfragmented text frame (RFC 6455 section 5.2): FIN and opcode 1, then the
 * payload length in 7 bits, or 126 and 16 bits, or 127 and 64 bits. A fan-out posts the same frame
 * to every connection, so it is framed once and each socket gets one write of the whole frame, as
 * a gateway's own frame writer would do, instead of `ws` framing it again per socket (a header
 * allocation, a cork and a two-buffer write each). Writing beside `ws` keeps frames whole and in
 * order only because `ws` writes each of its own frames at once: the gateway's server must keep
 * `perMessageDeflate` off (compression would queue `ws`'s frames behind this write).
 */
export function textFrame(payload: Uint8Array): Buffer {
  const length = payload.byteLength;
  const headerLength = length < 126 ? 2 : length <= 0xffff ? 4 : 10;
  const frame = Buffer.allocUnsafe(headerLength + length);
  frame[0] = 0x81;
  if (length < 126) frame[1] = length;
  else if (length <= 0xffff) {
    frame[1] = 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  frame.set(payload, headerLength);
  return frame;
}

/**
 * The `@connections` management API of the local gateway: one `manage()` that applies API
 * Gateway's rules (410 for a connection it does not know, 413 past the frame limit), counts the
 * calls and injects faults, reached three ways: over HTTP with SigV4 (`request`), by an SDK client
 * in this process (`request` again, without the socket), and directly (`transport`), which hands
 * the frame to the socket without an SDK call per frame.
 */
export function managementApi(sockets: ReadonlyMap<string, SocketEntry>, accessKeyId: string, faults: ManagementFaults = {}) {
  const stats = { posts: 0, gone: 0, deletes: 0, throttled: 0 };
  // The last payload framed: a fan-out posts one payload to many connections in a row.
  let framedPayload: Uint8Array | undefined;
  let framed: Buffer = Buffer.alloc(0);
  const frameOf = (payload: Uint8Array) => {
    if (payload !== framedPayload) {
      framed = textFrame(payload);
      framedPayload = payload;
    }
    return framed;
  };

  async function manage(call: ManagementCall): Promise<ManagementAnswer> {
    if (faults.jitterMs) await new Promise((resolve) => setTimeout(resolve, Math.random() * (faults.jitterMs as number)));
    return manageNow(call);
  }

  /** The rules, counters and faults of one call, answered at once (jitter aside, which `manage` adds). */
  function manageNow(call: ManagementCall): ManagementAnswer {
    if (call.action === 'post') stats.posts++;
    if (call.action === 'delete') stats.deletes++;
    if (faults.throttleRate && Math.random() < faults.throttleRate) {
      stats.throttled++;
      return refusedWith(429, 'LimitExceededException', 'Rate exceeded');
    }
    const entry = sockets.get(call.connectionId);
    const vanished = call.action === 'post' && faults.goneRate !== undefined && Math.random() < faults.goneRate;
    if (!entry || vanished) {
      if (call.action === 'post') stats.gone++;
      return gone;
    }
    switch (call.action) {
      case 'post':
        if (call.data.byteLength > MAX_FRAME_BYTES) return payloadTooLarge;
        // A socket already closing takes no more frames; API Gateway drops them the same way.
        if (entry.socket.readyState === WebSocket.OPEN) entry.wire.write(frameOf(call.data));
        return posted;
      case 'delete':
        entry.socket.close(1000, 'closed by server');
        return { status: 204 };
      case 'get':
        return {
          status: 200,
          // The wire names of GetConnection's answer (restJson1), which the SDK maps to ConnectedAt etc.
          body: {
            connectedAt: new Date(entry.connectedAt).toISOString(),
            lastActiveAt: new Date(entry.lastActiveAt).toISOString(),
            identity: { sourceIp: entry.sourceIp, userAgent: entry.userAgent },
          },
        };
    }
  }

  const actions: Record<string, ManagementCall['action']> = { POST: 'post', DELETE: 'delete', GET: 'get' };

  /** A request as `ApiGatewayManagementApiClient` sends it (restJson1, errors named in a header). */
  async function request(incoming: ManagementRequest): Promise<ManagementAnswer> {
    const refusal = authorizationRefusal(incoming.authorization, accessKeyId);
    if (refusal) return refusal;
    const action = actions[incoming.method];
    if (!action) return refusedWith(405, 'MethodNotAllowedException', 'Method not allowed');
    let connectionId: string;
    try {
      connectionId = decodeURIComponent(incoming.path.slice('/@connections/'.length));
    } catch {
      return refusedWith(400, 'BadRequestException', 'Invalid connection id');
    }
    return manage(action === 'post' ? { action, connectionId, data: incoming.body } : { action, connectionId });
  }

  /** Fails as the SDK would: an error named for the answer's error type. */
  const raise = (answer: ManagementAnswer) => {
    if (answer.status < 400) return;
    const error = new Error(String(answer.body?.message ?? answer.errorType)) as Error & { $metadata: { httpStatusCode: number } };
    error.name = answer.errorType ?? 'ManagementApiError';
    error.$metadata = { httpStatusCode: answer.status };
    throw error;
  };

  const transport: ConnectionsTransport = {
    post: async (connectionId, data) => raise(await manage({ action: 'post', connectionId, data })),
    delete: async (connectionId) => raise(await manage({ action: 'delete', connectionId })),
    // One call per connection still, each under the same rules, but in one loop instead of a
    // promise chain per post: what a fan-out costs here should be the sends, as on API Gateway.
    postMany: async (connectionIds, data) => {
      const outcome = { sent: 0, gone: [] as string[], failed: [] as { connectionId: string; error: string }[] };
      for (const connectionId of connectionIds) {
        const call = { action: 'post', connectionId, data } as const;
        const answer = faults.jitterMs ? await manage(call) : manageNow(call);
        if (answer.status < 400) outcome.sent++;
        else if (answer.errorType === 'GoneException') outcome.gone.push(connectionId);
        else outcome.failed.push({ connectionId, error: answer.errorType ?? String(answer.status) });
      }
      return outcome;
    },
  };

  return { manage, request, transport, stats: (): ManagementStats => ({ ...stats }) };
}

/** Reads the fault settings, refusing values that are not rates (0–1) or a delay in ms. */
export function faultsFromSettings(settings: Readonly<Record<string, string | undefined>>): ManagementFaults {
  const read = (name: string, max: number) => {
    const raw = settings[name];
    if (raw === undefined || raw === '') return undefined;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0 || value > max) throw new Error(`${name} must be a number from 0 to ${max}, not ${raw}`);
    return value;
  };
  return {
    goneRate: read('LOCAL_CONNECTIONS_GONE_RATE', 1),
    throttleRate: read('LOCAL_CONNECTIONS_THROTTLE_RATE', 1),
    jitterMs: read('LOCAL_CONNECTIONS_JITTER_MS', 60_000),
  };
}

/** The management API's `request`, for an SDK client in this process (see `inProcessRequestHandler`). */
export function managementResponder(request: (incoming: ManagementRequest) => Promise<ManagementAnswer>) {
  return async ({ method, path, headers, body }: InProcessRequest): Promise<InProcessResponse> => {
    const answer = await request({ method, path, authorization: headers.authorization, body });
    const responseHeaders: Record<string, string> = answer.errorType ? { 'x-amzn-errortype': answer.errorType } : {};
    if (answer.body) responseHeaders['content-type'] = 'application/json';
    return {
      statusCode: answer.status,
      headers: responseHeaders,
      body: answer.body ? Buffer.from(JSON.stringify(answer.body)) : new Uint8Array(),
    };
  };
}
