import { projectVapidKeys } from '#domain/push/config';
import { loadProject } from '#shared/auth';
import { NotFoundError } from '#shared/errors';
import { httpHandler, ok } from '#shared/http';
import * as z from '#shared/schema';

const query = z.object({ projectId: z.optional(z.string().check(z.maxLength(128))) });

/**
 * Unauthenticated by design (the browser needs it before it can subscribe). The project is named
 * by `?projectId=` or `X-Service-Project-Id`; an unknown project is a 404, so no key pair is ever
 * made for a project that does not exist.
 */
export const handler = httpHandler('GetVapidPublicKey', { query }, async ({ query, headers }) => {
  const projectId = query.projectId ?? headers['x-service-project-id'];
  if (!projectId) {
    throw new NotFoundError('project_not_found', 'Name the project with ?projectId= or the X-Service-Project-Id header');
  }
  if (!(await loadProject(projectId))) throw new NotFoundError('project_not_found', 'Project not found');
  return ok({ publicKey: (await projectVapidKeys(projectId)).publicKey }, { 'cache-control': 'public, max-age=300' });
});
