import fc from 'fast-check';

/**
 * Generators of bad input for the fuzz suite (`test/e2e/fuzz.test.ts`): odd characters and
 * strings, JSON values of every type, text that is not JSON, values too big or too deep for a
 * careless handler, odd path segments and header values. Nothing here knows a route.
 */

/** JSON text spliced into a body as is, for what `JSON.stringify` cannot write (1e400, depth 100 000). */
export class RawJson {
  constructor(
    readonly text: string,
    readonly label: string,
  ) {}
  toJSON(): string {
    return `<raw ${this.label}>`;
  }
}

const range = (from: number, to: number) => fc.integer({ min: from, max: to }).map((code) => String.fromCharCode(code));

/** One "character" that trips code: lone surrogates, NUL and controls, RTL marks, joiners, emoji, non-characters. */
export const oddChar: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('a', 'Z', '0', '-', '_', '.', ':', '@') },
  range(0xd800, 0xdbff),
  range(0xdc00, 0xdfff),
  range(0x00, 0x1f),
  range(0x7f, 0x9f),
  fc.constantFrom('\u202e', '\u202d', '\u200f', '\u061c', '\u2067', '\u05e9', '\u0639'),
  fc.constantFrom('\u200b', '\u200d', '\ufeff', '\u00ad', '\u2028', '\u2029'),
  fc.constantFrom('😀', '👩‍👩‍👧‍👦', '🏳️‍🌈', '🇺🇸', '\u{1f9d1}\u{1f3fd}\u200d\u{1f4bb}'),
  fc.constantFrom('e\u0301', 'Z\u0334\u0321\u0327\u031b', '\u0d15\u0d4d\u0d37', '\u{10ffff}', '\ufffe', '\uffff', '\ufffd'),
  fc.constantFrom('#', '/', '\\', '%', '"', "'", '<', '>', '&', '?', ' ', '\t', '\n', '\r', '*', '$', '{', '}', '`'),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
);

/** Strings a validator or a key builder may mishandle, short and long. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: oddChar, maxLength: 24 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '__proto__',
      'constructor',
      'null',
      'undefined',
      'NaN',
      'true',
      '0',
      '-1',
      '1e309',
      'P#other#R#room',
      'a#b',
      '../..',
      '..%2F..',
      '%00',
      '%ED%A0%80',
      '<script>alert(1)</script>',
      "' OR '1'='1",
      `$\{7*7}`,
      '{{7*7}}',
      'javascript:alert(1)',
      'https://example.com/\u0000',
      'https://169.254.169.254/latest/meta-data',
      '2021-02-30T25:61:61Z',
      '9999-12-31T23:59:59.999Z',
      '0000-01-01T00:00:00Z',
    ),
  },
  { weight: 1, arbitrary: fc.tuple(fc.constantFrom(65, 129, 257, 2049, 4001, 10_001, 100_001), oddChar).map(([n, c]) => c.repeat(n)) },
);

/** Numbers at the edges; `JSON.stringify` writes -0 as 0, so the literal forms go through {@link rawNumber}. */
export const oddNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -1, 1.5, -0.5, 1e308, -1e308, 2 ** 53 + 1, 2 ** 64, 5e-324, -2147483649, 4294967296),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Number literals JSON allows but JavaScript cannot hold exactly (or at all). */
export const rawNumber: fc.Arbitrary<RawJson> = fc
  .constantFrom('1e400', '-1e400', '-0', '1E-400', '123456789012345678901234567890', '0.00000000000000000000000001', '1.0')
  .map((text) => new RawJson(text, text));

/** Deeply nested arrays or objects, written as text (`JSON.stringify` would overflow the stack first). */
export const deepJson: fc.Arbitrary<RawJson> = fc
  .tuple(fc.constantFrom(100, 1_000, 10_000, 100_000), fc.constantFrom('array', 'object'))
  .map(([depth, kind]) =>
    kind === 'array'
      ? new RawJson(`${'['.repeat(depth)}1${']'.repeat(depth)}`, `array nested ${depth} deep`)
      : new RawJson(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`, `object nested ${depth} deep`),
  );

/** Big values: long arrays and long strings, some past the 1 MiB body limit. */
export const hugeJson: fc.Arbitrary<RawJson> = fc
  .tuple(fc.constantFrom(10_000, 200_000, 1_100_000), fc.constantFrom('array', 'string', 'object'))
  .map(([size, kind]) => {
    if (kind === 'array') return new RawJson(`[${'0,'.repeat(Math.floor(size / 2))}0]`, `array of ${Math.floor(size / 2) + 1} zeros`);
    if (kind === 'object') {
      const keys = Math.floor(size / 12);
      return new RawJson(`{${Array.from({ length: keys }, (_, i) => `"k${i}":0`).join(',')}}`, `object of ${keys} keys`);
    }
    return new RawJson(JSON.stringify('x'.repeat(size)), `string of ${size} characters`);
  });

/** Keys for objects: the given vocabulary, odd strings and the names that pollute prototypes. */
export const keyOf = (vocabulary: readonly string[]): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: vocabulary.length > 0 ? fc.constantFrom(...vocabulary) : fc.constant('name') },
    { weight: 2, arbitrary: oddString.filter((key) => key.length < 200) },
    { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', '') },
  );

/** Any JSON value, with odd leaves: null, booleans, edge numbers, odd strings, arrays, objects. */
export const oddValue = (vocabulary: readonly string[] = []): fc.Arbitrary<unknown> =>
  fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: 'small', withCrossShrink: true },
      fc.constant(null),
      fc.boolean(),
      oddNumber,
      oddString,
      fc.array(tie('value'), { maxLength: 5 }),
      fc.dictionary(keyOf(vocabulary), tie('value'), { maxKeys: 5 }),
    ),
  })).value;

/** A value for a field: a JSON value or literal text that cannot be built as a value. */
export const fieldValue = (vocabulary: readonly string[] = []): fc.Arbitrary<unknown> =>
  fc.oneof(
    { weight: 8, arbitrary: oddValue(vocabulary) },
    { weight: 1, arbitrary: rawNumber },
    { weight: 1, arbitrary: deepJson },
    { weight: 1, arbitrary: hugeJson },
  );

/** Writes a value as JSON text, splicing {@link RawJson} parts in where they stand. */
export function toJsonText(value: unknown): string {
  const raws: RawJson[] = [];
  const text = JSON.stringify(value, (_key, part: unknown) => {
    if (part instanceof RawJson) {
      raws.push(part);
      return `\u0000raw${raws.length - 1}\u0000`;
    }
    return part;
  });
  if (text === undefined) return '';
  return text.replace(/"\\u0000raw(\d+)\\u0000"/g, (_match, index: string) => raws[Number(index)]?.text ?? 'null');
}

/** Text that is not JSON, or JSON that parses to something surprising. */
export const malformedJson: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '{',
    '}',
    '{"a":',
    '{"a":1,}',
    '[1,2',
    "{'a':1}",
    '{a:1}',
    'NaN',
    'Infinity',
    'undefined',
    '{"a":1}{"b":2}',
    '{"a":01}',
    '{"a":.5}',
    '{"a":"\u0000"}',
    '{"a":"\t"}',
    '\u0000',
    '\ufeff{}',
    '{"a":"\\ud800"}',
    '{"a":"\\udc00\\ud800"}',
    '{"a":"\\u0000"}',
    '{"a":"\\uZZZZ"}',
    '{"__proto__":{"admin":true,"roles":["owner"]}}',
    '{"constructor":{"prototype":{"admin":true}}}',
    '{"a":1,"a":2}',
    '// comment\n{}',
    '   ',
    'true',
    'false',
    '-0',
  ),
  fc.string({ unit: oddChar, minLength: 1, maxLength: 40 }),
  fc.jsonValue().map((value) => {
    const text = JSON.stringify(value) ?? 'null';
    return text.length > 1 ? text.slice(0, -1) : `${text}{`;
  }),
);

/** Bytes that are not UTF-8: a stray continuation, an overlong slash, an encoded surrogate, 0xFF. */
export const invalidUtf8: fc.Arbitrary<Uint8Array> = fc
  .constantFrom([0xff], [0xc3, 0x28], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80])
  .chain((bad) =>
    fc.constantFrom('{"content":"', '{"', '["', '').map((before) => {
      const head = new TextEncoder().encode(before);
      const tail = new TextEncoder().encode(before.startsWith('{"content') ? '"}' : before ? '"}' : '');
      return Uint8Array.from([...head, ...bad, ...tail]);
    }),
  );

/** Percent-encodes every UTF-16 code unit as WTF-8, so lone surrogates reach the server as the bytes ED A0 80. */
export function percentEncodeWtf8(value: string): string {
  let encoded = '';
  for (let i = 0; i < value.length; i++) {
    const unit = value.charCodeAt(i);
    const next = value.charCodeAt(i + 1);
    let code = unit;
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      code = 0x10000 + ((unit - 0xd800) << 10) + (next - 0xdc00);
      i++;
    }
    if (code < 0x80 && /[A-Za-z0-9_.~-]/.test(String.fromCharCode(code))) {
      encoded += String.fromCharCode(code);
      continue;
    }
    const bytes =
      code < 0x80
        ? [code]
        : code < 0x800
          ? [0xc0 | (code >> 6), 0x80 | (code & 63)]
          : code < 0x10000
            ? [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63)]
            : [0xf0 | (code >> 18), 0x80 | ((code >> 12) & 63), 0x80 | ((code >> 6) & 63), 0x80 | (code & 63)];
    encoded += bytes.map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  return encoded;
}

/**
 * A bad path segment, ready to splice into a URL: odd strings percent-encoded, encoded slashes and
 * dots, malformed escapes, very long ids. At most 4000 characters encoded: Node's HTTP parser
 * refuses a request head over 16 KB before the gateway sees it.
 */
export const oddPathSegment: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: oddString
      .filter((value) => value.length > 0)
      .map(percentEncodeWtf8)
      .filter((segment) => segment.length <= 4000),
  },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '%2F',
      'a%2Fb',
      '%2e%2e',
      '..%2F..%2Fplatform%2Fprojects',
      '%',
      '%zz',
      '%E0%A4%A',
      '%ED%A0%80',
      '%C0%AF',
      '%00',
      '%25',
      '%2523',
      '+',
      '*',
      '~',
      '%23',
      '%3F',
      'a%20b',
      '%FF%FE',
      'null',
      '__proto__',
      'constructor',
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom(129, 1024, 4000).map((length) => 'a'.repeat(length)) },
);

/** Printable ASCII (what `fetch` sends as given: it trims outer spaces), short or up to 4000 characters. */
export const headerString: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string({ unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 80 }) },
  { weight: 1, arbitrary: fc.constantFrom(1000, 4000).map((length) => 'A'.repeat(length)) },
);

/** Base64url of UTF-8 JSON, for hand-made JWT parts. */
export const base64url = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url');
