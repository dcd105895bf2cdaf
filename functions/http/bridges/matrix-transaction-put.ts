import { matrixTransaction, receiveMatrixTransaction, verifiedMatrixBridge } from '#domain/bridges/matrix-inbound';
import { httpHandler, ok, parseRawJson } from '#edge/http';
import { matrixQuery, matrixTransactionParams } from './inbound-schemas';

/**
 * `PUT .../_matrix/app/v1/transactions/<txnId>`, what a homeserver calls when the registration's
 * `url` is `<base>/webhooks/matrix/<bridgeId>`. A transaction sent again is answered the same and
 * writes nothing new: its events are keyed by their ids, so the transaction id needs no record.
 */
export const handler = httpHandler(
  'MatrixBridgeTransactionPut',
  { params: matrixTransactionParams, query: matrixQuery, rawBody: true },
  async ({ params, query, headers, rawBody, sourceIp }) => {
    const bridge = await verifiedMatrixBridge(params.bridgeId, headers, query.access_token);
    return ok(await receiveMatrixTransaction(bridge, parseRawJson(matrixTransaction, rawBody), sourceIp));
  },
);
