import type { Connection } from '#shared/db/connection';
import { errorAnswer, RateLimitedError, traced } from '#shared/errors';

/** Fields echoed on an `error` frame so the client can match it to what it sent. */
export type ErrorContext = { clientMessageId?: string; ref?: string; event?: string };

/** A frame the client sent that is refused before it runs: the `error` frame it gets back. */
export class FrameRefusal extends Error {
  constructor(readonly answer: Record<string, unknown>) {
    super(String((answer.error as { code?: string } | undefined)?.code ?? 'refused'));
  }
}

/**
 * How one frame type of the frame table (`webSocketFrames` in `functions/wiring/`) is handled, in three
 * steps: `parse` checks the frame (a {@link FrameRefusal} answers it), `prepare` reads what `run`
 * needs while the router checks the entry's flag and rate limit beside it (a round trip saved,
 * and simply unused when the limit says no), and `run` acts once both passed.
 */
export interface FrameHandler<Parsed = unknown, Prepared = unknown> {
  parse(frame: Record<string, unknown>, raw: string): Parsed;
  prepare?(connection: Connection, parsed: Parsed): Promise<Prepared>;
  run(connection: Connection, parsed: Parsed, prepared: Prepared): Promise<unknown>;
  /** Echoed on the error frame of anything that fails after parsing. */
  errorContext?(parsed: Parsed): ErrorContext;
}

/** An `error` frame for a failure, told as {@link errorAnswer} tells it (a 5xx hides its message). */
export function errorFrame(error: unknown, context: ErrorContext = {}) {
  return {
    type: 'error',
    ...context,
    error: errorAnswer(error).body.error,
    ...(error instanceof RateLimitedError ? { retryAfter: error.retryAfterSeconds } : {}),
  };
}

/** The `validation_failed` frame for zod issues. */
export function validationRefusal(issues: readonly { path: PropertyKey[]; message: string }[], context: ErrorContext = {}) {
  const details = issues.map((issue) => ({ field: issue.path.map(String).join('.'), message: issue.message }));
  return new FrameRefusal({
    type: 'error',
    ...context,
    error: traced({ code: 'validation_failed', message: 'Invalid frame', details }),
  });
}
