import type { WebSocketConstructor } from './types.js';

/** The `ws` package's module: its class is the default export and, from 8.x, `WebSocket`. */
interface WsModule {
  readonly default?: WebSocketConstructor;
  readonly WebSocket?: WebSocketConstructor;
}

let wsPackage: Promise<WebSocketConstructor | undefined> | undefined;

/**
 * The `ws` package's class, for Node 20 (no global WebSocket): an optional peer dependency, loaded
 * only when it is needed so browsers never fetch it. The specifier is a variable and the import
 * carries the bundlers' ignore comments, so bundlers neither follow it nor fail on it (`ws` has no
 * browser build). Undefined when the package is not installed.
 */
function loadWsPackage(): Promise<WebSocketConstructor | undefined> {
  const specifier = 'ws';
  wsPackage ??= import(/* webpackIgnore: true */ /* @vite-ignore */ specifier).then(
    (module: WsModule) => module.WebSocket ?? module.default,
    () => undefined,
  );
  return wsPackage;
}

/**
 * The WebSocket class the client opens sockets with: the `WebSocket` option, else the platform's
 * global (browsers, Node ≥ 22), else the `ws` package if it is installed. Synchronous when one of
 * the first two is there, so opening a socket waits on nothing.
 */
export function webSocketImplementation(
  given: WebSocketConstructor | undefined,
): WebSocketConstructor | Promise<WebSocketConstructor | undefined> {
  return given ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket ?? loadWsPackage();
}
