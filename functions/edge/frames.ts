import { enforceRouteGuards } from '#domain/guards/route-guards';
import type { Connection } from '#shared/db/connection';
import { errorAnswer, RateLimitedError } from '#shared/errors';
import * as z from '#shared/schema';
import { type FrameRoute, frameRoute, webSocketFrames } from '#wiring';

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
  return new FrameRefusal({ type: 'error', ...context, error: { code: 'validation_failed', message: 'Invalid frame', details } });
}

const frameKind = z.object({ type: z.string() });

const unsupported = (message: string) => ({ type: 'error', error: { code: 'unsupported_frame', message } });

/**
 * Builds the `$default` dispatcher from the frame table and one handler per frame type (middy
 * `ws-router`'s shape, on the frame's `type`). Throws at cold start unless the handlers cover the
 * table's function-answered frames exactly, so a frame type cannot be listed without a handler or
 * handled without a listing.
 * The returned function answers a raw frame with the frame to send back, or `undefined`.
 */
// Each handler's own types stay inside it; the router only passes its values along.
export function frameRouter(handlers: Readonly<Record<string, FrameHandler<any, any>>>) {
  // Frames with an `answer` never reach a function on AWS; the router answers them the same way.
  const listed = webSocketFrames
    .filter((frame) => !frame.answer)
    .map((frame) => frame.type)
    .sort();
  const given = Object.keys(handlers).sort();
  if (JSON.stringify(listed) !== JSON.stringify(given)) {
    throw new Error(`Frame handlers [${given.join(', ')}] do not match the frame table [${listed.join(', ')}] (functions/wiring/)`);
  }
  const known = webSocketFrames.map((frame) => frame.type).join(', ');

  return async (connection: Connection, raw: string): Promise<unknown> => {
    let frame: unknown;
    try {
      frame = JSON.parse(raw);
    } catch {
      return { type: 'error', error: { code: 'invalid_json', message: 'Frames are JSON objects' } };
    }
    const kind = frameKind.safeParse(frame);
    if (!kind.success) return validationRefusal(kind.error.issues).answer;
    const route: FrameRoute | undefined = frameRoute(kind.data.type);
    if (!route) return unsupported(`Unknown frame type ${JSON.stringify(kind.data.type).slice(0, 80)}; use ${known}`);
    const channel = connection.roomId ? 'room' : 'user';
    if (!route.channels.includes(channel)) {
      return unsupported(
        `The ${channel} channel does not take ${route.type} frames; it accepts ${webSocketFrames
          .filter((f) => f.channels.includes(channel))
          .map((f) => f.type)
          .join(', ')}`,
      );
    }
    if (route.answer) return route.answer;
    const handler = handlers[route.type] as FrameHandler;
    let parsed: unknown;
    try {
      parsed = handler.parse(frame as Record<string, unknown>, raw);
    } catch (error) {
      if (error instanceof FrameRefusal) return error.answer;
      throw error;
    }
    const context = handler.errorContext?.(parsed) ?? {};
    try {
      const [, prepared] = await Promise.all([
        enforceRouteGuards(route, { projectId: connection.projectId, userId: connection.userId, connectionId: connection.connectionId }),
        handler.prepare?.(connection, parsed),
      ]);
      return await handler.run(connection, parsed, prepared);
    } catch (error) {
      return errorFrame(error, context);
    }
  };
}
