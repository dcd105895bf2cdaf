import * as z from '#shared/schema';

/**
 * The bridge id of a platform webhook's path, taken as any string: an id that names no bridge of
 * the platform, malformed or not, is the same 404 `bridge_not_found`, and the caller learns
 * nothing more from the difference.
 */
const anyBridgeId = z.string().check(z.maxLength(200));

export const inboundBridgeParams = z.object({ bridgeId: anyBridgeId });

/** The homeserver's own path: the bridge's and a transaction id the homeserver picks. */
export const matrixTransactionParams = z.object({ bridgeId: anyBridgeId, txnId: z.string().check(z.maxLength(255)) });

/** Older homeservers send the `hs_token` as this query parameter instead of a bearer header. */
export const matrixQuery = z.object({ access_token: z.optional(z.string().check(z.maxLength(1024))) });
