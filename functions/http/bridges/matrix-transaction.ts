import { matrixTransaction, receiveMatrixTransaction, verifiedMatrixBridge } from '#domain/bridges/matrix-inbound';
import { httpHandler, ok, parseRawJson } from '#edge/http';
import { matrixQuery } from './inbound-schemas';
import { bridgeParams } from './schemas';

/** `POST /webhooks/matrix/<bridgeId>` with an application service transaction `{ events }`: `hs_token` first, then the events. */
export const handler = httpHandler(
  'MatrixBridgeTransaction',
  { params: bridgeParams, query: matrixQuery, rawBody: true },
  async ({ params, query, headers, rawBody, sourceIp }) => {
    const bridge = await verifiedMatrixBridge(params.bridgeId, headers, query.access_token);
    return ok(await receiveMatrixTransaction(bridge, parseRawJson(matrixTransaction, rawBody), sourceIp));
  },
);
