/**
 * Stands in for `https-proxy-agent` in the Lambda bundles (an esbuild alias of `ChatFunction`).
 * `web-push` loads it only inside `sendNotification`, for a proxy option; the service builds its
 * requests with `generateRequestDetails` and sends them through `functions/shared/outbound.ts`, so
 * the agent (with `agent-base` and `debug`, about 15 KB of the push functions) is never used there.
 */
export class HttpsProxyAgent {
  constructor() {
    throw new Error('https-proxy-agent is not bundled: web pushes go through functions/shared/outbound.ts');
  }
}
