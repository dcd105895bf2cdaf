/**
 * What the site's `<script>` tag tells the widget: the API from the script's own `src`, the
 * project and room from its data attributes. On AWS the WebSocket API and the SSE function URL
 * live on other hosts than the HTTP API that serves the script, so the tag names them
 * (`data-ws-url`, `data-sse-url`, the stack's `WebSocketUrl` and `SseUrl` outputs); the local
 * runtime serves all three on one port and needs neither.
 */
export interface WidgetSettings {
  /** The API's origin and stage path, from the script's `src` (without `/embed.js`). */
  readonly baseUrl: string;
  readonly projectId: string;
  /** A room id, or `support` for the project's support room. */
  readonly room: string;
  readonly wsUrl: string | undefined;
  readonly sseUrl: string | undefined;
  /** The panel's heading. */
  readonly title: string;
}

/** The widget's own script: `document.currentScript` while it first runs (async scripts too), else the tag by its `src`. */
export function ownScript(): HTMLScriptElement | undefined {
  const current = document.currentScript;
  if (current instanceof HTMLScriptElement) return current;
  const tags = document.querySelectorAll<HTMLScriptElement>('script[data-project][src*="embed.js"]');
  return tags[tags.length - 1];
}

/** The settings of a tag, or `undefined` when it names no project (nothing to show). */
export function settingsOf(script: HTMLScriptElement): WidgetSettings | undefined {
  const { project, room, wsUrl, sseUrl, title } = script.dataset;
  if (!project) return undefined;
  const src = new URL(script.src, document.baseURI);
  const basePath = src.pathname.replace(/\/embed\.js$/, '');
  return {
    baseUrl: `${src.origin}${basePath}`,
    projectId: project,
    room: room || 'support',
    wsUrl: wsUrl || undefined,
    sseUrl: sseUrl || undefined,
    title: title || 'Chat with us',
  };
}
