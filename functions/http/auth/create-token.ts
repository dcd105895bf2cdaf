import { issueToken } from '#domain/auth/sessions';
import { created, httpHandler } from '#edge/http';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';
import { expiresInSchema, rolesSchema } from './schemas';

const body = z.strictObject({
  userId: idSchema,
  roles: z.optional(rolesSchema),
  expiresIn: z.optional(expiresInSchema),
  /** The subject the GDPR routes act on; `userId` when absent. */
  sub: z.optional(idSchema),
});

export const handler = httpHandler('CreateToken', { body }, async ({ body, caller }) => created(await issueToken(caller.projectId, body)));
