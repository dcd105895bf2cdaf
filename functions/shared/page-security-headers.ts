/**
 * The headers every page of the service is served with (the demo, the console, the API reference at
 * `/docs`): a page may load only its own scripts and talk only to its own origin (its WebSocket
 * included). The local gateway sends them (`lib/local/gateway/web-pages.ts`), on AWS the edge
 * distribution's response headers policy for the console (`lib/constructs/chat-console-site.ts`),
 * and the `/docs` handler its own answer.
 */
export const PAGE_SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self' ws: wss:; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;
