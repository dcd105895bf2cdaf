import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { errorAnswer } from '#shared/errors';

/** The Lambda result an error becomes: status, headers and the JSON error body. */
export interface ErrorResponse {
  statusCode: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Turns any error of the steps after it into the answer {@link errorAnswer} tells: a 4xx as
 * written (with `Retry-After` and the like), a 5xx by its code with a generic message quoting
 * `context.traceId`, logged in full. It stands where middy's stock `http-error-handler` would, which
 * exposes the message of any error flagged `expose` and says nothing of a trace id. `headers` go on
 * every error answer, below the error's own (`content-type` on HTTP; nothing on a WebSocket, whose
 * handshake answer is not a document).
 */
export function errorResponse(
  options: { headers?: Record<string, string> } = {},
): MiddlewareObj<unknown, unknown, Error, Context & { traceId?: string }> {
  return {
    onError: (request) => {
      const answer = errorAnswer(request.error, request.context.traceId);
      const response: ErrorResponse = {
        statusCode: answer.status,
        headers: { ...options.headers, ...answer.headers },
        body: JSON.stringify(answer.body),
      };
      request.response = response;
    },
  };
}
