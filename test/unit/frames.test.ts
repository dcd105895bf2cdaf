import { describe, expect, it } from 'vitest';
import { type FrameHandler, frameRouter } from '#edge/frames';
import type { Connection } from '#shared/db/connection';
import { webSocketFrames } from '#wiring';

/**
 * The `$default` frame router: built from the frame table of `functions/wiring/`, so a frame type cannot
 * be listed without a handler or handled without a listing, and the table decides which channel
 * takes which frame before any handler runs.
 */

const answering = (answer: unknown): FrameHandler => ({ parse: () => undefined, run: async () => answer });
/** A handler for every frame type a function answers (API Gateway answers the rest itself). */
const everyType = () =>
  Object.fromEntries(
    webSocketFrames.filter((frame) => !frame.answer).map((frame) => [frame.type, answering({ type: `handled ${frame.type}` })]),
  );
const roomChannel = { projectId: 'p', userId: 'u', roles: [], connectionId: 'c', roomId: 'r', channel: 'room' } as unknown as Connection;
const userChannel = { projectId: 'p', userId: 'u', roles: [], connectionId: 'c', channel: 'user' } as unknown as Connection;

describe('frameRouter', () => {
  it('refuses at cold start a handler set that misses a listed frame type', () => {
    // Prepare
    const { message: _message, ...missingMessage } = everyType();

    // Act
    const build = () => frameRouter(missingMessage);

    // Assess
    expect(build).toThrow(/do not match the frame table/);
  });

  it('refuses at cold start a handler for a frame type the table does not list', () => {
    // Act
    const build = () => frameRouter({ ...everyType(), typing: answering(undefined) });

    // Assess
    expect(build).toThrow(/typing/);
  });

  it.each([
    { frame: 'not json', code: 'invalid_json' },
    { frame: '{"no":"type"}', code: 'validation_failed' },
    { frame: '{"type":"typing"}', code: 'unsupported_frame' },
    { frame: '{"type":"message","content":"hi"}', code: 'unsupported_frame' },
    { frame: '{"type":"client-typing"}', code: 'unsupported_frame' },
  ])('answers $frame on a user channel with $code, before any handler runs', async ({ frame, code }) => {
    // Prepare
    const dispatch = frameRouter(everyType());

    // Act
    const answer = await dispatch(userChannel, frame);

    // Assess
    expect(answer).toMatchObject({ type: 'error', error: { code } });
  });

  it('hands a frame the channel accepts to its handler', async () => {
    // Prepare
    const dispatch = frameRouter(everyType());

    // Act
    const answer = await dispatch(roomChannel, '{"type":"message","content":"hi"}');

    // Assess
    expect(answer).toEqual({ type: 'handled message' });
  });

  it('refuses a handler for a frame API Gateway answers, and answers such a frame from the table', async () => {
    // Prepare
    const dispatch = frameRouter(everyType());

    // Act
    const build = () => frameRouter({ ...everyType(), ping: answering({ type: 'pong from a function' }) });
    const answer = await dispatch(userChannel, '{"type":"ping"}');

    // Assess
    expect(build).toThrow(/do not match the frame table/);
    expect(answer).toEqual({ type: 'pong' });
  });
});
