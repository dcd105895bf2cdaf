import { marketplaceResultBody, recordMarketplaceResult, verifyMarketplaceSignature } from '#domain/audit/marketplace';
import { httpHandler, ok, parseRawJson } from '#edge/http';

/** Signature first (on the raw bytes), then the body; 201 when stored, 200 when a result as new was stored already. */
export const handler = httpHandler('RecordMarketplaceAuditResult', { rawBody: true }, async ({ headers, rawBody, traceId }) => {
  await verifyMarketplaceSignature(headers['x-service-signature'], rawBody);
  const { stored } = await recordMarketplaceResult(parseRawJson(marketplaceResultBody, rawBody), traceId);
  return stored ? { status: 201, body: { stored } } : ok({ stored });
});
