import { signIn } from '#domain/auth/sessions';
import { PROJECT_ID_PATTERN } from '#domain/projects/projects';
import { httpHandler, ok } from '#shared/http';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';
import { expiresInSchema } from './schemas';

const body = z.strictObject({
  projectId: z.string().check(z.regex(PROJECT_ID_PATTERN, 'must be a project id')),
  userId: idSchema,
  password: z.string().check(z.minLength(1), z.maxLength(1024)),
  expiresIn: z.optional(expiresInSchema),
});

export const handler = httpHandler('SignIn', { body }, async ({ body }) => ok(await signIn(body)));
