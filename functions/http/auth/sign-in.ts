import { z } from 'zod';
import { signIn } from '#domain/auth/sessions';
import { PROJECT_ID_PATTERN } from '#domain/projects/projects';
import { httpHandler, ok } from '#shared/http';
import { idSchema } from '#shared/ids';
import { expiresInSchema } from './schemas';

const body = z
  .object({
    projectId: z.string().regex(PROJECT_ID_PATTERN, 'must be a project id'),
    userId: idSchema,
    password: z.string().min(1).max(1024),
    expiresIn: expiresInSchema.optional(),
  })
  .strict();

export const handler = httpHandler('SignIn', { body }, async ({ body }) => ok(await signIn(body)));
