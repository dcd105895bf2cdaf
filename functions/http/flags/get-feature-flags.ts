import { resolveFlags } from '#domain/flags/feature-flags';
import { httpHandler, ok } from '#edge/http';
import { authenticateToken, bearerToken } from '#shared/auth';
import { UnauthorizedError } from '#shared/errors';

/**
 * Public: clients read flags before they sign in and while they reconnect. A valid bearer token
 * targets its project; an expired or invalid one gets the anonymous defaults (`flagship: false`),
 * since a client whose token just lapsed still needs its reconnect curve.
 */
export const handler = httpHandler('GetFeatureFlags', {}, async ({ headers }) => {
  const token = bearerToken(headers.authorization);
  let projectId: string | undefined;
  if (token) {
    try {
      projectId = (await authenticateToken(token, headers.origin)).projectId;
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) throw error;
    }
  }
  // The answer depends on the token's project, and its CORS headers on the Origin: a browser must not
  // serve one page's cached answer to another page or another user.
  return ok(await resolveFlags(projectId), { 'cache-control': 'private, max-age=60', vary: 'Authorization, Origin' });
});
