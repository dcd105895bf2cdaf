/**
 * One error family for every handler. Only instances of these reach the client with their message;
 * anything else becomes a logged 500 whose message is generic.
 */
export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = new.target.name;
  }

  toJSON(): { error: { code: string; message: string; details?: unknown } } {
    return {
      error: { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) },
    };
  }
}

export class BadRequestError extends HttpError {
  constructor(message: string, details?: unknown, code = 'validation_failed') {
    super(400, code, message, details);
  }
}

export class UnauthorizedError extends HttpError {
  constructor(
    code: 'missing_credentials' | 'invalid_token' | 'token_expired' | 'invalid_api_key' | 'invalid_credentials',
    message: string,
  ) {
    super(401, code, message);
  }
}

export class ForbiddenError extends HttpError {
  constructor(message: string, code = 'forbidden') {
    super(403, code, message);
  }
}

export class NotFoundError extends HttpError {
  constructor(code: string, message: string) {
    super(404, code, message);
  }
}

export class ConflictError extends HttpError {
  constructor(code: string, message: string) {
    super(409, code, message);
  }
}

export class PayloadTooLargeError extends HttpError {
  constructor(message: string) {
    super(413, 'payload_too_large', message);
  }
}

export class RateLimitedError extends HttpError {
  constructor(readonly retryAfterSeconds: number) {
    super(
      429,
      'rate_limited',
      `Rate limit exceeded; retry after ${retryAfterSeconds} s`,
      { retryAfterSeconds },
      {
        'Retry-After': String(retryAfterSeconds),
      },
    );
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
