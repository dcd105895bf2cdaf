/** What the gateway's parts share: its address, known once the server listens, and where it is in its life. */
export interface GatewayState {
  baseUrl: string;
  /** `host:port`, as `requestContext.domainName` names it. */
  domainName: string;
  /** Until the runtime's setup is done, `GET /health` answers 503. */
  ready: boolean;
  /** Sockets closed by `stop()` are not the clients leaving: no `$disconnect` runs for them. */
  stopping: boolean;
}

/**
 * The request target is always a path here (origin-form). Resolved against the base it would be
 * read as a URL of its own when it starts with `//` (`//?x` names the host `?x` and throws), so it
 * is appended to the base instead: `//rooms` stays a path, which no route serves.
 */
export const requestUrl = (state: GatewayState, target: string | undefined) =>
  new URL(`${state.baseUrl}${target?.startsWith('/') ? target : `/${target ?? ''}`}`);
