import { isIP } from 'node:net';
import type { MiddlewareObj } from '@middy/core';
import type { Context } from 'aws-lambda';
import { headerValue } from '#edge/headers';
import { constantTimeEqual } from '#shared/auth';
import { boundIfSet } from '#shared/bindings';
import { ForbiddenError } from '#shared/errors';
import { logger } from '#shared/logger';
import { secretValue } from '#shared/secrets';
import { ORIGIN_VERIFY_BINDING, ORIGIN_VERIFY_HEADER } from '#wiring';

/** The viewer's address, set by CloudFront's viewer-request functions over whatever the client sent. */
export const VIEWER_ADDRESS_HEADER = 'x-chat-viewer-address';

/** What the `originGuard` middleware puts on the context: the address per-IP limits and handlers see. */
export interface SourceIpContext extends Context {
  sourceIp: string;
}

interface GuardedEvent {
  readonly headers?: Readonly<Record<string, string | undefined>>;
}

/** The viewer address header's value when it is one IPv4 or IPv6 address; anything else counts as absent. */
function viewerAddressOf(event: GuardedEvent): string | undefined {
  const value = headerValue(event.headers, VIEWER_ADDRESS_HEADER)?.trim();
  return value && isIP(value) ? value.toLowerCase() : undefined;
}

/**
 * Closes the API around CloudFront and finds the caller's address. A function bound to the
 * `origin-verify` secret (every HTTP API route and `$connect` where a deployment has CloudFront in
 * front; `behindOriginHeader` of the wiring says which) refuses a request whose `x-origin-verify` is
 * missing or wrong with 403 `direct_access_forbidden` before anything else runs, and only then
 * trusts `x-chat-viewer-address` as the source IP: behind CloudFront the socket's address is
 * CloudFront's. Unbound (`edge: false`, one machine) nothing is checked and the header is ignored,
 * so a client cannot pick the address its per-IP limits count.
 */
export function originGuard<E extends GuardedEvent>(options: {
  /** Whether this function stands behind CloudFront's origin header (`behindOriginHeader`). */
  readonly behindOriginHeader: boolean;
  /** The address of the socket the request came in on. */
  readonly socketAddress: (event: E) => string;
}): MiddlewareObj<E, unknown, Error, SourceIpContext> {
  return {
    before: async ({ event, context }) => {
      context.sourceIp = options.socketAddress(event);
      if (!options.behindOriginHeader || !boundIfSet(ORIGIN_VERIFY_BINDING)) return;
      const expected = await secretValue('origin-verify');
      // Bound but gone (deleted by hand) is a broken deployment: it stays closed, and the log says why.
      if (!expected) logger.error('The origin-verify secret is bound but cannot be read: every request is refused');
      const given = headerValue(event.headers, ORIGIN_VERIFY_HEADER);
      if (!expected || !given || !constantTimeEqual(given, expected)) {
        throw new ForbiddenError('This API answers through the service base URL only', 'direct_access_forbidden');
      }
      context.sourceIp = viewerAddressOf(event) ?? context.sourceIp;
    },
  };
}
