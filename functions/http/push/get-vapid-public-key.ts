import { vapidPublicKeyFor } from '#domain/push/vapid-public-key';
import { httpHandler, ok } from '#edge/http';
import { NotFoundError } from '#shared/errors';
import { PROJECT_ID_PATTERN } from '#shared/ids';
import * as z from '#shared/schema';

const query = z.object({ projectId: z.optional(z.string().check(z.maxLength(128))) });

/**
 * Unauthenticated by design (the browser needs it before it can subscribe). The project is named
 * by `?projectId=` or `X-Service-Project-Id`. A well-formed id of a project that does not exist is
 * answered like one that does (a decoy key, see `vapidPublicKeyFor`), so the route tells nobody
 * which projects exist, and no key pair is ever made for one that does not.
 */
export const handler = httpHandler('GetVapidPublicKey', { query }, async ({ query, headers }) => {
  const projectId = query.projectId ?? headers['x-service-project-id'];
  if (!projectId || !PROJECT_ID_PATTERN.test(projectId)) {
    throw new NotFoundError('project_not_found', 'Name the project with ?projectId= or the X-Service-Project-Id header');
  }
  return ok({ publicKey: await vapidPublicKeyFor(projectId) }, { 'cache-control': 'public, max-age=300' });
});
