import { signIn } from '#domain/auth/sessions';
import { httpHandler, ok } from '#edge/http';
import { idSchema, PROJECT_ID_PATTERN } from '#shared/ids';
import * as z from '#shared/schema';
import { expiresInSchema } from './schemas';

const body = z.strictObject({
  projectId: z.string().check(z.regex(PROJECT_ID_PATTERN, 'must be a project id')),
  userId: idSchema,
  password: z.string().check(z.minLength(1), z.maxLength(1024)),
  expiresIn: z.optional(expiresInSchema),
});

export const handler = httpHandler('SignIn', { body }, async ({ body }) => ok(await signIn(body)));
