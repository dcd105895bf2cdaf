/**
 * A request header whatever its case. HTTP API events come lower-cased (`httpHeaderNormalizer`), but
 * API Gateway keeps a WebSocket handshake's header names as the client sent them (`Origin`).
 */
export function headerValue(headers: Readonly<Record<string, string | undefined>> | undefined, name: string): string | undefined {
  const wanted = name.toLowerCase();
  return Object.entries(headers ?? {}).find(([candidate]) => candidate.toLowerCase() === wanted)?.[1];
}
