import type { ErrorBody, ErrorCodeOf } from '#shared/error-codes';
import { logger } from '#shared/logger';
import { currentTraceId } from '#shared/request-context';

/**
 * One error family for every handler. Only instances below 500 and {@link NotConfiguredError}s
 * reach the client with their message; any other 5xx keeps its code but shows a generic message
 * (see {@link errorAnswer}). Codes come from `#shared/error-codes`, each with the status it is
 * listed with.
 */
export class HttpError<Status extends number = number> extends Error {
  constructor(
    readonly statusCode: Status,
    readonly code: ErrorCodeOf<Status>,
    message: string,
    readonly details?: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = new.target.name;
  }

  toJSON(): { error: ErrorBody } {
    return {
      error: { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) },
    };
  }
}

export class BadRequestError extends HttpError<400> {
  constructor(message: string, details?: unknown, code: ErrorCodeOf<400> = 'validation_failed') {
    super(400, code, message, details);
  }
}

export class UnauthorizedError extends HttpError<401> {
  constructor(code: ErrorCodeOf<401>, message: string) {
    super(401, code, message);
  }
}

export class ForbiddenError extends HttpError<403> {
  constructor(message: string, code: ErrorCodeOf<403> = 'forbidden') {
    super(403, code, message);
  }
}

export class NotFoundError extends HttpError<404> {
  constructor(code: ErrorCodeOf<404>, message: string) {
    super(404, code, message);
  }
}

export class ConflictError extends HttpError<409> {
  constructor(code: ErrorCodeOf<409>, message: string) {
    super(409, code, message);
  }
}

export class PayloadTooLargeError extends HttpError<413> {
  constructor(message: string) {
    super(413, 'payload_too_large', message);
  }
}

/** 429 with `Retry-After`; `code` names what ran out when it is more than a plain rate limit (`sign_in_locked`). */
export class RateLimitedError extends HttpError<429> {
  constructor(
    readonly retryAfterSeconds: number,
    code: ErrorCodeOf<429> = 'rate_limited',
    message = `Rate limit exceeded; retry after ${retryAfterSeconds} s`,
  ) {
    super(
      429,
      code,
      message,
      { retryAfterSeconds },
      {
        'Retry-After': String(retryAfterSeconds),
      },
    );
  }
}

/**
 * 503 for a feature the operator has not set up (`ai_not_configured`). The cause is a setting, not
 * a fault: its message names the setting to make, which is no secret, so it reaches the client as
 * written, and nobody needs a trace id to learn what to do.
 */
export class NotConfiguredError extends HttpError<503> {
  constructor(code: ErrorCodeOf<503>, message: string) {
    super(503, code, message);
  }
}

export class RoomNotFoundError extends NotFoundError {
  constructor() {
    super('room_not_found', 'Room not found');
  }
}

export class MessageNotFoundError extends NotFoundError {
  constructor() {
    super('message_not_found', 'Message not found in this room');
  }
}

/**
 * An error body with the trace id of the request it answers (`#shared/request-context`), for
 * bodies written by hand (frames refused before they run); {@link errorAnswer} adds it itself.
 */
export function traced(body: ErrorBody, traceId = currentTraceId()): ErrorBody {
  return traceId === undefined ? body : { ...body, traceId };
}

export interface ErrorAnswer {
  readonly status: number;
  readonly body: { error: ErrorBody };
  readonly headers: Record<string, string>;
}

/**
 * What the client is told about a failure, on every transport (HTTP, SSE, WebSocket). A 4xx is the
 * client's to fix, so its message and details go out as written, and so does a
 * {@link NotConfiguredError}, whose message names a setting. Any other 5xx is ours: its message may
 * name tables, hosts or provider answers, so the client gets the code, a generic message quoting
 * the trace id, and the log gets the rest. Anything not an `HttpError` is a 500. Every body
 * carries `traceId` (the one given, else the current request's), 4xx included, so any answer can
 * be found in the logs.
 */
export function errorAnswer(error: unknown, traceId = currentTraceId()): ErrorAnswer {
  const quote = traceId ? `; quote trace id ${traceId}` : '';
  if (error instanceof HttpError && (error.statusCode < 500 || error instanceof NotConfiguredError)) {
    return { status: error.statusCode, body: { error: traced(error.toJSON().error, traceId) }, headers: { ...error.headers } };
  }
  if (error instanceof HttpError) {
    logger.error('request failed', { error });
    return {
      status: error.statusCode,
      body: { error: traced({ code: error.code, message: `The service could not complete the request${quote}` }, traceId) },
      headers: { ...error.headers },
    };
  }
  logger.error('unexpected error', { error: error as Error });
  const internal: ErrorBody = traced({ code: 'internal_error', message: `Internal error${quote}` }, traceId);
  return { status: 500, body: { error: internal }, headers: {} };
}
