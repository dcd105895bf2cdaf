import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';

/** Path parameters shared by the room routes. */
export const roomParams = z.object({ roomId: idSchema });
export const roomMemberParams = z.object({ roomId: idSchema, userId: idSchema });

/** A message id in a query string or header (ids are integers below 2^53). */
export const messageIdParam = z.coerce.number().check(z.int(), z.nonnegative(), z.maximum(Number.MAX_SAFE_INTEGER));

/** Query integers arrive as strings. */
export const queryInt = (min: number, max: number) => z.coerce.number().check(z.int(), z.minimum(min), z.maximum(max));

/** A message's routes: the id in the path (its room in the query or body, as ids are unique per room). */
export const messageParams = z.object({ messageId: messageIdParam });
export const roomMessageParams = z.object({ roomId: idSchema, messageId: messageIdParam });
/** `?roomId=` of the message routes without a body. */
export const roomQuery = z.object({ roomId: idSchema });
