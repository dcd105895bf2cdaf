import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { localCors, withoutCorsHeaders } from '../../lib/local/gateway/cors';

/**
 * The local gateway's CORS with an allow-list of origins (a deployment's `corsAllowOrigins`), as API
 * Gateway answers it: the listed origin echoed, nothing for another; the shared runtime itself
 * allows every origin (test/e2e/widget-cors.test.ts covers that over HTTP).
 */

const SHOP = 'https://shop.example.com';
const cors = localCors([SHOP, 'http://localhost:5173']);
const requestOf = (method: string, headers: Record<string, string>) => ({ method, headers }) as unknown as IncomingMessage;

describe('the local gateway with an allow-list of origins', () => {
  it('echoes a listed origin on answers and preflights', () => {
    // Act
    const answer = cors.answerHeaders(requestOf('POST', { origin: SHOP }), '/auth/guest');
    const preflight = cors.preflightHeaders(
      requestOf('OPTIONS', { origin: SHOP, 'access-control-request-method': 'PUT' }),
      '/admin/widget',
    );

    // Assess
    expect(answer['access-control-allow-origin']).toBe(SHOP);
    expect(preflight).toMatchObject({
      'access-control-allow-origin': SHOP,
      'access-control-allow-methods': 'GET,POST,PUT,PATCH,DELETE,OPTIONS',
    });
  });

  it('gives an unlisted origin, or none, no CORS header at all', () => {
    // Act
    const stranger = cors.answerHeaders(requestOf('GET', { origin: 'https://stranger.example.org' }), '/rooms');
    const strangerPreflight = cors.preflightHeaders(
      requestOf('OPTIONS', { origin: 'https://stranger.example.org', 'access-control-request-method': 'GET' }),
      '/rooms',
    );
    const originless = cors.answerHeaders(requestOf('GET', {}), '/rooms');

    // Assess
    expect(stranger).toEqual({});
    expect(strangerPreflight).toEqual({});
    expect(originless).toEqual({});
  });

  it('drops the CORS headers a function set itself, keeping the rest', () => {
    // Act
    const kept = withoutCorsHeaders({ 'Access-Control-Allow-Origin': '*', 'content-type': 'application/json', 'retry-after': '3' });

    // Assess
    expect(kept).toEqual({ 'content-type': 'application/json', 'retry-after': '3' });
  });
});
