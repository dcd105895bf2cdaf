import { describe, expect, it } from 'vitest';
import { SseParser } from '../../sdk/sse-parser';

/** Feeds `chunks` one by one and collects every event. */
function parse(chunks: string[]) {
  const parser = new SseParser();
  const events = chunks.flatMap((chunk) => parser.push(chunk));
  return { parser, events };
}

/** Every way of cutting `text` into two chunks. */
const splits = (text: string) => Array.from({ length: text.length + 1 }, (_, at): [string, string] => [text.slice(0, at), text.slice(at)]);

const STREAM = 'retry: 1000\n\nid: 17\nevent: message\ndata: {"id":17}\n\n: heartbeat\n\nid: 18\ndata: {"id":18}\n\n';

describe('the SSE parser', () => {
  it('reads the service stream: retry, ids, named events and heartbeats', () => {
    // Act
    const { parser, events } = parse([STREAM]);

    // Assess
    expect(events).toEqual([
      { event: 'message', data: '{"id":17}', lastEventId: '17' },
      { event: 'message', data: '{"id":18}', lastEventId: '18' },
    ]);
    expect(parser.retryMs).toBe(1000);
    expect(parser.comments).toBe(1);
  });

  it.each(splits(STREAM))('gives the same events whatever the chunk boundary (%j | %j)', (first, second) => {
    // Act
    const { events } = parse([first, second]);

    // Assess
    expect(events).toEqual(parse([STREAM]).events);
  });

  it('gives the same events fed one character at a time', () => {
    // Act
    const { events, parser } = parse([...STREAM]);

    // Assess
    expect(events.map((event) => event.data)).toEqual(['{"id":17}', '{"id":18}']);
    expect(parser.comments).toBe(1);
  });

  describe.each([
    { variant: 'LF', eol: '\n' },
    { variant: 'CRLF', eol: '\r\n' },
    { variant: 'CR', eol: '\r' },
  ])('with $variant line ends', ({ eol }) => {
    const text = ['data: first', 'data: second', '', 'data: third', '', ''].join(eol);

    it('joins multi-line data with \\n and dispatches on blank lines', () => {
      // Act
      const { events } = parse([text]);

      // Assess
      expect(events.map((event) => event.data)).toEqual(['first\nsecond', 'third']);
    });

    it.each(splits(text).filter(([first]) => first.endsWith('\r')))(
      'keeps a line end split after its CR in one piece (%j | %j)',
      (first, second) => {
        // Act
        const { events } = parse([first, second]);

        // Assess
        expect(events.map((event) => event.data)).toEqual(['first\nsecond', 'third']);
      },
    );
  });

  it('counts comments, ignores unknown fields and keeps a value without a leading space as is', () => {
    // Act
    const { events, parser } = parse([': one\n:two\nfoo: bar\ndata:no-space\ndata:  two spaces\n\n']);

    // Assess
    expect(events).toEqual([{ event: 'message', data: 'no-space\n two spaces', lastEventId: '' }]);
    expect(parser.comments).toBe(2);
  });

  it('treats a field without a colon as an empty value', () => {
    // Act
    const { events } = parse(['data\ndata\n\n']);

    // Assess
    expect(events).toEqual([{ event: 'message', data: '\n', lastEventId: '' }]);
  });

  it('dispatches nothing for a blank line without data, and forgets that block’s event name', () => {
    // Act
    const { events } = parse(['event: ping\n\ndata: x\n\n']);

    // Assess
    expect(events).toEqual([{ event: 'message', data: 'x', lastEventId: '' }]);
  });

  it('carries the last id over to later events and ignores ids containing NUL', () => {
    // Act
    const { events } = parse(['id: 5\ndata: a\n\ndata: b\n\nid: 6\0\ndata: c\n\n']);

    // Assess
    expect(events.map((event) => event.lastEventId)).toEqual(['5', '5', '5']);
  });

  it('ignores a retry that is not all digits', () => {
    // Act
    const { parser } = parse(['retry: 1000\n', 'retry: soon\n', 'retry: 20x\n\n']);

    // Assess
    expect(parser.retryMs).toBe(1000);
  });

  it('strips a leading byte order mark', () => {
    // Act
    const { events } = parse(['\uFEFF', 'data: after bom\n\n']);

    // Assess
    expect(events).toEqual([{ event: 'message', data: 'after bom', lastEventId: '' }]);
  });

  it('holds an event back until its blank line arrives, and drops an unterminated one', () => {
    // Prepare
    const parser = new SseParser();

    // Act
    const before = parser.push('data: partial\n');
    parser.end();
    const after = parser.push('data: next\n\n');

    // Assess
    expect(before).toEqual([]);
    expect(after).toEqual([{ event: 'message', data: 'next', lastEventId: '' }]);
  });

  it('keeps multi-byte characters whole', () => {
    // Prepare
    const bytes = new TextEncoder().encode('data: 🎉 ünïcode\n\n');
    const decoder = new TextDecoder();
    const parser = new SseParser();

    // Act: one byte at a time, as a network stream may cut them
    const events = [...bytes].flatMap((byte) => parser.push(decoder.decode(new Uint8Array([byte]), { stream: true })));

    // Assess
    expect(events).toEqual([{ event: 'message', data: '🎉 ünïcode', lastEventId: '' }]);
  });
});
