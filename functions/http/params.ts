import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';

/** Path parameters shared by the room routes. */
export const roomParams = z.object({ roomId: idSchema });
export const roomMemberParams = z.object({ roomId: idSchema, userId: idSchema });

/** Query integers arrive as strings. */
export const queryInt = (min: number, max: number) => z.coerce.number().check(z.int(), z.minimum(min), z.maximum(max));
