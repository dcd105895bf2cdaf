import * as z from '#shared/schema';
import { ROLES } from '#wiring';

export const rolesSchema = z.array(z.enum(ROLES)).check(z.minLength(1), z.maxLength(ROLES.length));
export const expiresInSchema = z.number().check(z.int(), z.positive('must be a positive number of seconds'));
