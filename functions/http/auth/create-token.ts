import { z } from 'zod';
import { issueToken } from '#domain/auth/sessions';
import { created, httpHandler } from '#shared/http';
import { idSchema } from '#shared/ids';
import { expiresInSchema, rolesSchema } from './schemas';

const body = z.object({ userId: idSchema, roles: rolesSchema.optional(), expiresIn: expiresInSchema.optional() }).strict();

export const handler = httpHandler('CreateToken', { body }, async ({ body, caller }) => created(await issueToken(caller.projectId, body)));
