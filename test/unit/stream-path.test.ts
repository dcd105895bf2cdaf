import { describe, expect, it } from 'vitest';

// The wrapper calls awslambda.streamifyResponse when its module loads in Lambda; matching paths needs none of that.
(globalThis as { awslambda?: unknown }).awslambda ??= { streamifyResponse: (handler: unknown) => handler, HttpResponseStream: {} };
const { matchRoutePath } = await import('#edge/stream');

describe('matchRoutePath (function URLs carry no path parameters)', () => {
  it.each([
    ['/rooms/lobby/stream', { roomId: 'lobby' }],
    ['/rooms/lobby/stream/', { roomId: 'lobby' }],
    ['/rooms/a%3Ab/stream', { roomId: 'a:b' }],
  ])('reads %s', (path, params) => {
    expect(matchRoutePath('/rooms/{roomId}/stream', path)).toEqual(params);
  });

  it.each(['/', '/rooms/lobby', '/rooms/lobby/stream/extra', '/other/lobby/stream', '/rooms/%E0%A4%A/stream'])('refuses %s', (path) => {
    expect(matchRoutePath('/rooms/{roomId}/stream', path)).toBeUndefined();
  });
});
