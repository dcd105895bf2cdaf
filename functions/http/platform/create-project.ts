import { createProject } from '#domain/projects/projects';
import { created, httpHandler } from '#edge/http';
import { operatorAuth } from '#edge/operator-auth';
import { PROJECT_ID_PATTERN } from '#shared/ids';
import * as z from '#shared/schema';

const body = z.strictObject({
  name: z.string().check(z.trim(), z.minLength(1), z.maxLength(200)),
  projectId: z.optional(z.string().check(z.regex(PROJECT_ID_PATTERN, 'must be 2-63 lower-case letters, digits or dashes'))),
});

export const handler = httpHandler('CreateProject', { body }, async ({ body }) => created(await createProject(body)), operatorAuth);
