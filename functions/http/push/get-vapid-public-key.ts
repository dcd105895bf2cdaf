import { vapidPublicKeyFor } from '#domain/push/vapid-public-key';
import { httpHandler, ok } from '#edge/http';
import { authenticateToken, bearerToken } from '#shared/auth';
import { BadRequestError, ForbiddenError } from '#shared/errors';
import { PROJECT_ID_PATTERN } from '#shared/ids';
import * as z from '#shared/schema';

const PROJECT_ID_RULE = 'must be a project id (2-63 lower-case letters, digits or dashes)';

const query = z.object({ projectId: z.optional(z.string().check(z.maxLength(128), z.regex(PROJECT_ID_PATTERN, PROJECT_ID_RULE))) });

/**
 * The project whose key is asked for: named by `?projectId=` or `X-Service-Project-Id`, or the
 * project of the user token a browser already holds to subscribe. A token that is sent must be
 * valid, and a project named beside it must be its own (the key would not match the subscription).
 */
async function requestedProject(
  named: string | undefined,
  headers: Readonly<Record<string, string | undefined>>,
): Promise<{ projectId: string; fromToken: boolean }> {
  const header = headers['x-service-project-id'];
  if (named === undefined && header !== undefined && !PROJECT_ID_PATTERN.test(header)) {
    throw new BadRequestError(`Invalid request: header X-Service-Project-Id: ${PROJECT_ID_RULE}`, [
      { field: 'headers.x-service-project-id', message: PROJECT_ID_RULE },
    ]);
  }
  const token = bearerToken(headers.authorization);
  const tokenProject = token === undefined ? undefined : (await authenticateToken(token, headers.origin)).projectId;
  const projectId = named ?? header;
  if (projectId !== undefined && tokenProject !== undefined && projectId !== tokenProject) {
    throw new ForbiddenError("The project named is not the token's project", 'project_mismatch');
  }
  if (projectId !== undefined) return { projectId, fromToken: false };
  if (tokenProject === undefined) {
    throw new BadRequestError(
      'Name the project: send a user token (Authorization: Bearer <JWT>), ?projectId= or the X-Service-Project-Id header',
      undefined,
      'project_required',
    );
  }
  return { projectId: tokenProject, fromToken: true };
}

/**
 * Public by design (a page may ask before it has a user). A well-formed id of a project that does
 * not exist is answered like one that does (a decoy key, see `vapidPublicKeyFor`), so the route
 * tells nobody which projects exist, and no key pair is ever made for one that does not.
 */
export const handler = httpHandler('GetVapidPublicKey', { query }, async ({ query, headers }) => {
  const { projectId, fromToken } = await requestedProject(query.projectId, headers);
  // The URL alone does not name the project when a header or the token does: caches must key on those too.
  return ok(
    { publicKey: await vapidPublicKeyFor(projectId) },
    { 'cache-control': `${fromToken ? 'private' : 'public'}, max-age=300`, vary: 'Authorization, X-Service-Project-Id, Origin' },
  );
});
