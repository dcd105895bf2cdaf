import { readFileSync } from 'node:fs';

/**
 * The sources of the distribution's CloudFront Functions (runtime `cloudfront-js-2.0`), read at
 * synth for `cloudfront.FunctionCode.fromInline`. CloudFront refuses a function over 10 KB
 * (test/unit/edge-functions.test.ts holds them under it).
 */

export const STAGE_PLACEHOLDER = '__WEBSOCKET_STAGE__';

/** API Gateway's stage names: letters, digits, `-` and `_`, up to 128. */
const STAGE_NAME = /^[A-Za-z0-9_-]{1,128}$/;

const source = (file: string) => readFileSync(new URL(`./${file}`, import.meta.url), 'utf8');

/** The `/ws/*` behaviour's viewer request: the spec's WebSocket paths rewritten to `/<stageName>?roomId=…`. */
export function websocketViewerRequestCode(stageName: string): string {
  if (!STAGE_NAME.test(stageName)) throw new Error(`Not a WebSocket API stage name: ${JSON.stringify(stageName)}`);
  return source('websocket-viewer-request.js').replaceAll(STAGE_PLACEHOLDER, stageName);
}

/** The default behaviour's viewer request: sets `x-chat-viewer-address` only. */
export function viewerAddressCode(): string {
  return source('viewer-address.js');
}
