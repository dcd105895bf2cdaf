/** An error the service answered (HTTP status or `error` frame), or one the SDK raised itself. */
export class ChatError extends Error {
  /** The service's error code (`rate_limited`, `invalid_token`, ...) or the SDK's (`network_error`, `closed`, ...). */
  readonly code: string;
  /** The HTTP status, when the error came from an HTTP answer or a refused WebSocket upgrade. */
  readonly status: number | undefined;
  /** Seconds to wait before trying again (`429` answers and `rate_limited` frames). */
  readonly retryAfter: number | undefined;
  readonly details: unknown;
  /** The `ref` of the client frame an `error` frame answers (`trigger` returns it). */
  readonly ref: string | undefined;
  /** The request's trace id the service answered with (`error.traceId`): quote it when reporting the failure. */
  readonly traceId: string | undefined;

  constructor(
    code: string,
    message: string,
    extra: { status?: number; retryAfter?: number; details?: unknown; ref?: string; traceId?: string; cause?: unknown } = {},
  ) {
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'ChatError';
    this.code = code;
    this.status = extra.status;
    this.retryAfter = extra.retryAfter;
    this.details = extra.details;
    this.ref = extra.ref;
    this.traceId = extra.traceId;
  }
}

/** The service's error body `{ error: { code, message, details?, traceId } }`, loosely read. */
export function errorFromBody(body: unknown, status: number | undefined, retryAfterHeader?: string | null): ChatError {
  const error = (body as { error?: { code?: unknown; message?: unknown; details?: unknown; traceId?: unknown } } | null | undefined)?.error;
  const code = typeof error?.code === 'string' ? error.code : status === undefined ? 'unknown_error' : `http_${status}`;
  const message =
    typeof error?.message === 'string' ? error.message : `Request failed${status === undefined ? '' : ` with HTTP ${status}`}`;
  const fromDetails = (error?.details as { retryAfterSeconds?: unknown } | undefined)?.retryAfterSeconds;
  const retryAfter = parseRetryAfter(retryAfterHeader) ?? (typeof fromDetails === 'number' ? fromDetails : undefined);
  return new ChatError(code, message, {
    ...(status === undefined ? {} : { status }),
    ...(retryAfter === undefined ? {} : { retryAfter }),
    ...(error?.details === undefined ? {} : { details: error.details }),
    ...(typeof error?.traceId === 'string' ? { traceId: error.traceId } : {}),
  });
}

/**
 * A `Retry-After` header in seconds: delay-seconds, or an HTTP date (seconds from `now`, rounded up,
 * never negative). `undefined` when absent or unreadable.
 */
export function parseRetryAfter(header: string | null | undefined, now = Date.now()): number | undefined {
  const value = header?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value);
  const at = /[a-z]/i.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

/** How long `error` asks to wait before trying again, in milliseconds (0 when it does not say). */
export const retryAfterMs = (error: ChatError): number => (error.retryAfter ?? 0) * 1000;

/**
 * How the SDK reacts to a failed attempt: `fatal` ends the client (bad credentials, not a member,
 * no such room, a malformed request), `rate_limited` waits `retryAfter`, `transient` tries the next
 * transport or backs off.
 */
export function classify(error: ChatError): 'fatal' | 'rate_limited' | 'transient' {
  if (error.status === 429 || error.code === 'rate_limited') return 'rate_limited';
  if (error.status === 400 || error.status === 401 || error.status === 403) return 'fatal';
  // A 404 `not_found` means no such route (an older server or a gateway in between), not no such room.
  if (error.status === 404 && error.code !== 'not_found') return 'fatal';
  return 'transient';
}

/** Any thrown value as a `ChatError`: a `ChatError` unchanged, anything else under `code` with the original as `cause`. */
export function toChatError(error: unknown, code = 'network_error'): ChatError {
  if (error instanceof ChatError) return error;
  return new ChatError(code, error instanceof Error ? error.message : String(error), { cause: error });
}

/**
 * An `error` frame of the WebSocket (`{ type: 'error', error: { code, message }, retryAfter?, ref? }`):
 * `retryAfter` and the `ref` of the frame it answers sit beside the error body, not in it.
 */
export function errorFromFrame(frame: Record<string, unknown>): ChatError {
  const error = errorFromBody(frame, undefined);
  return new ChatError(error.code, error.message, {
    ...(typeof frame.retryAfter === 'number' ? { retryAfter: frame.retryAfter } : {}),
    ...(error.details === undefined ? {} : { details: error.details }),
    ...(typeof frame.ref === 'string' ? { ref: frame.ref } : {}),
    ...(error.traceId === undefined ? {} : { traceId: error.traceId }),
  });
}
