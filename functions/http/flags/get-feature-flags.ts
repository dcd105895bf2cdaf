import { resolveFlags } from '#domain/flags/feature-flags';
import { authenticateToken, bearerToken } from '#shared/auth';
import { UnauthorizedError } from '#shared/errors';
import { httpHandler, ok } from '#shared/http';

/** Public: clients read flags before they sign in. A bearer token, when sent, targets its project; a bad one is a 401, not ignored. */
export const handler = httpHandler('GetFeatureFlags', {}, async ({ headers }) => {
  let projectId: string | undefined;
  if (headers.authorization !== undefined) {
    const token = bearerToken(headers.authorization);
    if (!token) throw new UnauthorizedError('invalid_token', 'Authorization must be Bearer <JWT>');
    projectId = (await authenticateToken(token)).projectId;
  }
  return ok(await resolveFlags(projectId), { 'cache-control': 'private, max-age=60' });
});
