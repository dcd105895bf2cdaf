import { z } from 'zod';
import { ROLES } from '#lib/routes';

export const rolesSchema = z.array(z.enum(ROLES)).min(1).max(ROLES.length);
export const expiresInSchema = z.number().int().positive('must be a positive number of seconds');
