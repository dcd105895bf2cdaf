import { runtime } from './api';

/** One server-sent event as EventSource would dispatch it. */
export interface SseEvent {
  readonly id?: string;
  readonly event?: string;
  readonly data: string;
}

/**
 * A `text/event-stream` response read with `fetch`, parsed by the test's own code (the `id:`,
 * `event:`, `data:`, `retry:` and comment lines of the SSE format), so a server bug cannot hide
 * behind the SDK's parser. A refused stream has its JSON `body` instead.
 */
export interface SseStream {
  readonly status: number;
  readonly headers: Headers;
  /** The parsed JSON body of a response that is not an event stream (a refusal). */
  readonly body: any;
  readonly events: SseEvent[];
  /** Comment lines (`: heartbeat`), without the colon. */
  readonly comments: string[];
  /** The last `retry:` value. */
  readonly retry: () => number | undefined;
  /** The first event (received so far or later) matching `predicate`; rejects after `timeoutMs`. */
  next(predicate: (event: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  /** Resolves once the stream sent anything at all (its `retry:` line opens it). */
  started(timeoutMs?: number): Promise<void>;
  close(): void;
}

export interface SseOptions {
  /** Sent as `Authorization: Bearer`. */
  readonly token?: string;
  readonly headers?: Record<string, string>;
  /** @default the shared runtime's */
  readonly baseUrl?: string;
}

/** Opens `path` (e.g. `/rooms/<id>/stream?token=...`) and reads its events as they arrive. */
export async function openSse(path: string, options: SseOptions = {}): Promise<SseStream> {
  const abort = new AbortController();
  const headers: Record<string, string> = { accept: 'text/event-stream', ...options.headers };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const response = await fetch(`${options.baseUrl ?? runtime().baseUrl}${path}`, { headers, signal: abort.signal });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let retry: number | undefined;
  let received = false;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of waiters) waiter();
  };
  const close = () => abort.abort();

  const isStream = (response.headers.get('content-type') ?? '').startsWith('text/event-stream');
  let body: unknown;
  if (!isStream) {
    const text = await response.text();
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
  } else if (response.body) {
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    const dispatch = (block: string) => {
      let id: string | undefined;
      let event: string | undefined;
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) comments.push(line.slice(1).trim());
        const [field, ...rest] = line.split(':');
        const value = rest.join(':').replace(/^ /, '');
        if (field === 'id') id = value;
        else if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
        else if (field === 'retry') retry = Number(value);
      }
      if (data.length > 0)
        events.push({ ...(id === undefined ? {} : { id }), ...(event === undefined ? {} : { event }), data: data.join('\n') });
    };
    void (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          received = true;
          buffer += value.replace(/\r\n?/g, '\n');
          let end = buffer.indexOf('\n\n');
          while (end >= 0) {
            dispatch(buffer.slice(0, end));
            buffer = buffer.slice(end + 2);
            end = buffer.indexOf('\n\n');
          }
          wake();
        }
      } catch {
        // Aborted by close().
      }
    })();
  }

  const until = <T>(what: string, probe: () => T | undefined, timeoutMs: number) =>
    new Promise<T>((resolve, reject) => {
      if (!isStream) {
        reject(new Error(`Not an event stream: ${response.status} ${JSON.stringify(body)}`));
        return;
      }
      const check = () => {
        const found = probe();
        if (found === undefined) return false;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(found);
        return true;
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`${what} within ${timeoutMs} ms; got ${JSON.stringify(events)}`));
      }, timeoutMs);
      if (!check()) waiters.add(check);
    });

  return {
    status: response.status,
    headers: response.headers,
    body,
    events,
    comments,
    retry: () => retry,
    next: (predicate, timeoutMs = 5000) => until('No matching event', () => events.find(predicate), timeoutMs),
    started: (timeoutMs = 5000) => until('Nothing received', () => (received ? true : undefined), timeoutMs).then(() => undefined),
    close,
  };
}

/** The JSON of an event's `data`. */
export const dataOf = (event: SseEvent) => JSON.parse(event.data);
