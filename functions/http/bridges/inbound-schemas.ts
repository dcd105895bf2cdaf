import * as z from '#shared/schema';
import { bridgeParams } from './schemas';

/**
 * The homeserver's own path: the bridge, and a transaction id the homeserver picks. That id is
 * opaque and not used (the events' ids key the messages), so any a homeserver sends is taken:
 * refusing one would stop that homeserver's transactions for good.
 */
export const matrixTransactionParams = z.object({
  ...bridgeParams.shape,
  txnId: z.string().check(z.minLength(1), z.maxLength(255)),
});

/** Older homeservers send the `hs_token` as this query parameter instead of a bearer header. */
export const matrixQuery = z.object({ access_token: z.optional(z.string().check(z.maxLength(1024))) });
