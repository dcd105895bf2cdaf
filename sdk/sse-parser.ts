/** One dispatched server-sent event. */
export interface SseEvent {
  /** The `event:` field; `message` when the event named none. */
  readonly event: string;
  /** The `data:` lines joined with `\n`. */
  readonly data: string;
  /** The last `id:` seen on the stream so far (it carries over to later events, as in EventSource). */
  readonly lastEventId: string;
}

/**
 * An incremental `text/event-stream` parser following the WHATWG HTML "event stream interpretation":
 * feed it decoded text in chunks of any size (a line, a field, even a CRLF pair may be split across
 * chunks) and it returns the events completed by each chunk. Comments (`:` lines) are counted in
 * `comments` and otherwise ignored; `retry:` updates `retryMs`.
 */
export class SseParser {
  /** The stream's last `retry:` value in milliseconds, if it sent one. */
  retryMs: number | undefined;
  /** The last event id, carried across events. */
  lastEventId = '';
  /** Comment lines seen (heartbeats). */
  comments = 0;

  private buffer = '';
  private data: string[] = [];
  private eventType = '';
  private firstChunk = true;
  /** The previous chunk ended with `\r`: a `\n` starting the next one belongs to that line break. */
  private pendingCr = false;

  /** Parses `chunk` and returns the events it completed. */
  push(chunk: string): SseEvent[] {
    let text = chunk;
    if (this.firstChunk && text.length > 0) {
      this.firstChunk = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    if (text.length === 0) return [];
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    const events: SseEvent[] = [];
    let start = 0;
    for (;;) {
      const lf = this.buffer.indexOf('\n', start);
      const cr = this.buffer.indexOf('\r', start);
      let end: number;
      if (cr === -1 && lf === -1) break;
      if (cr === -1 || (lf !== -1 && lf < cr)) end = lf;
      else end = cr;
      const line = this.buffer.slice(start, end);
      let next = end + 1;
      if (this.buffer[end] === '\r') {
        if (next === this.buffer.length) this.pendingCr = true;
        else if (this.buffer[next] === '\n') next += 1;
      }
      start = next;
      const event = this.line(line);
      if (event) events.push(event);
    }
    this.buffer = this.buffer.slice(start);
    return events;
  }

  /**
   * The stream ended. Per the spec an event not terminated by a blank line is discarded, so this
   * only resets the state for a reuse.
   */
  end(): void {
    this.buffer = '';
    this.data = [];
    this.eventType = '';
    this.pendingCr = false;
  }

  private line(line: string): SseEvent | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) {
      this.comments += 1;
      return undefined;
    }
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventType = value;
        break;
      case 'data':
        this.data.push(value);
        break;
      case 'id':
        if (!value.includes('\0')) this.lastEventId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
      // Unknown fields are ignored, as the spec says.
    }
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    const data = this.data;
    const eventType = this.eventType;
    this.data = [];
    this.eventType = '';
    if (data.length === 0) return undefined;
    return { event: eventType || 'message', data: data.join('\n'), lastEventId: this.lastEventId };
  }
}
