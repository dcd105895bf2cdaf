import { z } from 'zod';
import { createProject, PROJECT_ID_PATTERN } from '#domain/projects/projects';
import { created, httpHandler } from '#shared/http';

const body = z
  .object({
    name: z.string().trim().min(1).max(200),
    projectId: z.string().regex(PROJECT_ID_PATTERN, 'must be 2-63 lower-case letters, digits or dashes').optional(),
  })
  .strict();

export const handler = httpHandler('CreateProject', { body }, async ({ body }) => created(await createProject(body)));
