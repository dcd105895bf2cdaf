import type { AttributeValue, DynamoDBRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { compileFilters, type FilterPattern, FilterPatternError, matchesFilter } from '../../lib/local/event-filter';

/** A stream record as Lambda sees it (and filters it): attribute-value JSON, epoch seconds. */
function streamRecord(options: {
  eventName?: DynamoDBRecord['eventName'];
  sk?: string;
  image?: Record<string, AttributeValue>;
  sizeBytes?: number;
}): DynamoDBRecord {
  const keys = { pk: { S: 'P#p1#R#r1#MSGS' }, ...(options.sk !== undefined && { sk: { S: options.sk } }) };
  return {
    eventID: 'e1',
    eventName: options.eventName ?? 'INSERT',
    eventVersion: '1.1',
    eventSource: 'aws:dynamodb',
    awsRegion: 'us-east-1',
    eventSourceARN: 'arn:aws:dynamodb:ddblocal:000000000000:table/t/stream/2026-01-01T00:00:00.000',
    dynamodb: {
      ApproximateCreationDateTime: 1_767_225_600,
      Keys: keys,
      NewImage: { ...keys, ...options.image },
      SequenceNumber: '000000000000000000001',
      SizeBytes: options.sizeBytes ?? 42,
      StreamViewType: 'NEW_IMAGE',
    },
  };
}

const image = (attributes: Record<string, AttributeValue>) => streamRecord({ sk: 'MSG#1', image: attributes });

describe.each([
  { items: 'messages', prefix: 'MSG#', other: 'EVT#' },
  { items: 'outbox events', prefix: 'EVT#', other: 'MSG#' },
])('the event publisher pattern for $items', ({ prefix, other }) => {
  const pattern = { eventName: ['INSERT'], dynamodb: { Keys: { sk: { S: [{ prefix }] } } } };

  it.each([
    { case: `an INSERT of ${prefix}…`, record: streamRecord({ sk: `${prefix}0000000000000001` }), expected: true },
    { case: `an INSERT whose sort key is exactly ${prefix}`, record: streamRecord({ sk: prefix }), expected: true },
    { case: `a MODIFY of ${prefix}…`, record: streamRecord({ eventName: 'MODIFY', sk: `${prefix}1` }), expected: false },
    { case: `a REMOVE of ${prefix}…`, record: streamRecord({ eventName: 'REMOVE', sk: `${prefix}1` }), expected: false },
    { case: `an INSERT of ${other}…`, record: streamRecord({ sk: `${other}1` }), expected: false },
    { case: 'an INSERT of a membership', record: streamRecord({ sk: 'MEMBER#u1' }), expected: false },
    { case: 'a prefix in lower case', record: streamRecord({ sk: `${prefix.toLowerCase()}1` }), expected: false },
    { case: 'the prefix further in', record: streamRecord({ sk: `X${prefix}1` }), expected: false },
    { case: 'a record without a sort key', record: streamRecord({}), expected: false },
  ])('$case → $expected', ({ record, expected }) => {
    // Act
    const matched = matchesFilter(pattern, record);

    // Assess
    expect(matched).toBe(expected);
  });
});

describe('the wiring table pattern with both prefixes in one array', () => {
  const pattern = { eventName: ['INSERT'], dynamodb: { Keys: { sk: { S: [{ prefix: 'MSG#' }, { prefix: 'EVT#' }] } } } };

  it.each([
    { sk: 'MSG#1', expected: true },
    { sk: 'EVT#1', expected: true },
    { sk: 'ROOM', expected: false },
  ])('$sk → $expected', ({ sk, expected }) => {
    // Act
    const matched = matchesFilter(pattern, streamRecord({ sk }));

    // Assess
    expect(matched).toBe(expected);
  });
});

describe.each([
  {
    rule: 'literal strings (any of them)',
    pattern: { dynamodb: { NewImage: { status: { S: ['open', 'closed'] } } } },
    matching: [image({ status: { S: 'open' } }), image({ status: { S: 'closed' } })],
    notMatching: [image({ status: { S: 'archived' } }), image({ status: { S: 'Open' } }), image({})],
  },
  {
    rule: 'a literal that has to name the attribute type, as on AWS',
    pattern: { dynamodb: { NewImage: { status: ['open'] } } },
    matching: [],
    notMatching: [image({ status: { S: 'open' } })],
  },
  {
    rule: 'literal numbers, compared with JSON numbers only',
    pattern: { dynamodb: { SizeBytes: [42, 43] } },
    matching: [streamRecord({ sk: 'MSG#1', sizeBytes: 42 }), streamRecord({ sk: 'MSG#1', sizeBytes: 43 })],
    notMatching: [streamRecord({ sk: 'MSG#1', sizeBytes: 44 })],
  },
  {
    rule: 'DynamoDB numbers, which are strings in the record',
    pattern: { dynamodb: { NewImage: { count: { N: ['42'] } } } },
    matching: [image({ count: { N: '42' } })],
    notMatching: [image({ count: { N: '42.0' } }), image({ count: { S: '42' } })],
  },
  {
    rule: 'a number literal against a DynamoDB number string',
    pattern: { dynamodb: { NewImage: { count: { N: [42] } } } },
    matching: [],
    notMatching: [image({ count: { N: '42' } })],
  },
  {
    rule: 'booleans',
    pattern: { dynamodb: { NewImage: { urgent: { BOOL: [true] } } } },
    matching: [image({ urgent: { BOOL: true } })],
    notMatching: [image({ urgent: { BOOL: false } }), image({ urgent: { S: 'true' } }), image({})],
  },
  {
    rule: 'null and the empty string, which differ',
    pattern: { detail: { parent: [null] } },
    matching: [{ detail: { parent: null } }],
    notMatching: [{ detail: { parent: '' } }, { detail: {} }, {}],
  },
  {
    rule: 'a string set, matching when any element does',
    pattern: { dynamodb: { NewImage: { tags: { SS: ['urgent'] } } } },
    matching: [image({ tags: { SS: ['billing', 'urgent'] } })],
    notMatching: [image({ tags: { SS: ['billing'] } })],
  },
  {
    rule: 'prefix',
    pattern: { dynamodb: { Keys: { sk: { S: [{ prefix: 'MSG#' }] } } } },
    matching: [streamRecord({ sk: 'MSG#1' })],
    notMatching: [streamRecord({ sk: 'EVT#1' }), streamRecord({ sk: 'MSG' })],
  },
  {
    rule: 'suffix',
    pattern: { dynamodb: { NewImage: { file: { S: [{ suffix: '.png' }] } } } },
    matching: [image({ file: { S: 'a.png' } })],
    notMatching: [image({ file: { S: 'a.png.txt' } }), image({ file: { S: 'a.PNG' } }), image({})],
  },
  {
    rule: 'exists: true, on a leaf',
    pattern: { dynamodb: { NewImage: { deletedAt: { S: [{ exists: true }] } } } },
    matching: [image({ deletedAt: { S: '2026-01-01' } })],
    notMatching: [image({}), image({ deletedAt: { N: '1' } })],
  },
  {
    rule: 'exists: true, on an attribute object rather than a leaf (never matches, as on AWS)',
    pattern: { dynamodb: { NewImage: { deletedAt: [{ exists: true }] } } },
    matching: [],
    notMatching: [image({ deletedAt: { S: '2026-01-01' } }), image({})],
  },
  {
    rule: 'exists: false',
    pattern: { dynamodb: { NewImage: { deletedAt: { S: [{ exists: false }] } } } },
    matching: [image({}), image({ deletedAt: { N: '1' } }), { eventName: 'INSERT' }],
    notMatching: [image({ deletedAt: { S: '2026-01-01' } })],
  },
  {
    rule: 'anything-but with a list',
    pattern: { eventName: [{ 'anything-but': ['REMOVE', 'MODIFY'] }] },
    matching: [streamRecord({ eventName: 'INSERT', sk: 'MSG#1' })],
    notMatching: [streamRecord({ eventName: 'REMOVE', sk: 'MSG#1' }), streamRecord({ eventName: 'MODIFY', sk: 'MSG#1' }), { dynamodb: {} }],
  },
  {
    rule: 'anything-but with one value',
    pattern: { dynamodb: { NewImage: { status: { S: [{ 'anything-but': 'draft' }] } } } },
    matching: [image({ status: { S: 'sent' } })],
    notMatching: [image({ status: { S: 'draft' } }), image({})],
  },
  {
    rule: 'a numeric range',
    pattern: { dynamodb: { SizeBytes: [{ numeric: ['>', 0, '<=', 5] }] } },
    matching: [streamRecord({ sk: 'MSG#1', sizeBytes: 1 }), streamRecord({ sk: 'MSG#1', sizeBytes: 5 })],
    notMatching: [streamRecord({ sk: 'MSG#1', sizeBytes: 0 }), streamRecord({ sk: 'MSG#1', sizeBytes: 6 })],
  },
  {
    rule: 'numeric equality on the creation time in epoch seconds',
    pattern: { dynamodb: { ApproximateCreationDateTime: [{ numeric: ['=', 1_767_225_600] }] } },
    matching: [streamRecord({ sk: 'MSG#1' })],
    notMatching: [{ dynamodb: { ApproximateCreationDateTime: 1_767_225_601 } }],
  },
  {
    rule: 'numeric on a DynamoDB number, which is a string (never matches, as on AWS)',
    pattern: { dynamodb: { NewImage: { count: { N: [{ numeric: ['>', 0] }] } } } },
    matching: [],
    notMatching: [image({ count: { N: '42' } })],
  },
  {
    rule: 'several fields, all of which must match',
    pattern: { eventName: ['INSERT'], dynamodb: { Keys: { sk: { S: [{ prefix: 'MSG#' }] } }, NewImage: { urgent: { BOOL: [true] } } } },
    matching: [image({ urgent: { BOOL: true } })],
    notMatching: [
      image({ urgent: { BOOL: false } }),
      streamRecord({ eventName: 'MODIFY', sk: 'MSG#1', image: { urgent: { BOOL: true } } }),
    ],
  },
])('$rule', ({ pattern, matching, notMatching }) => {
  it.each(matching.map((record, index) => ({ index, record })))('matches record $index', ({ record }) => {
    // Act
    const matched = matchesFilter(pattern as FilterPattern, record);

    // Assess
    expect(matched).toBe(true);
  });

  it.each(notMatching.map((record, index) => ({ index, record })))('does not match record $index', ({ record }) => {
    // Act
    const matched = matchesFilter(pattern as FilterPattern, record);

    // Assess
    expect(matched).toBe(false);
  });
});

describe("a consumer's filter criteria", () => {
  const messages = { dynamodb: { Keys: { sk: { S: [{ prefix: 'MSG#' }] } } } };
  const events = { dynamodb: { Keys: { sk: { S: [{ prefix: 'EVT#' }] } } } };

  it.each([
    { case: 'a record matching the first pattern', sk: 'MSG#1', expected: true },
    { case: 'a record matching the second pattern', sk: 'EVT#1', expected: true },
    { case: 'a record matching neither', sk: 'ROOM', expected: false },
  ])('let through $case when any pattern matches: $expected', ({ sk, expected }) => {
    // Prepare
    const accepts = compileFilters([messages, events]);

    // Act
    const matched = accepts(streamRecord({ sk }));

    // Assess
    expect(matched).toBe(expected);
  });

  it('without patterns let every record through', () => {
    // Prepare
    const accepts = compileFilters([]);

    // Act
    const matched = [streamRecord({ sk: 'ROOM', eventName: 'REMOVE' }), {}].map(accepts);

    // Assess
    expect(matched).toEqual([true, true]);
  });

  it('name the pattern that cannot be evaluated, before any record arrives', () => {
    // Act
    const compile = () => compileFilters([messages, { dynamodb: { Keys: { sk: { S: [{ wildcard: 'MSG#*' }] } } } }]);

    // Assess
    expect(compile).toThrow(
      new FilterPatternError(
        'filter 2: dynamodb.Keys.sk.S: unsupported operator "wildcard" (supported: prefix, suffix, exists, anything-but, numeric)',
      ),
    );
  });
});

describe('patterns that fail loudly instead of passing or dropping records silently', () => {
  it.each([
    { case: 'a bare value instead of an array', pattern: { eventName: 'INSERT' }, message: /eventName: expected an array of matchers/ },
    { case: 'an empty array', pattern: { eventName: [] }, message: /eventName: an empty array matches nothing/ },
    { case: 'an empty pattern', pattern: {}, message: /an empty pattern/ },
    { case: 'wildcard', pattern: { sk: { S: [{ wildcard: 'MSG#*' }] } }, message: /sk\.S: unsupported operator "wildcard"/ },
    {
      case: 'equals-ignore-case',
      pattern: { sk: { S: [{ 'equals-ignore-case': 'msg' }] } },
      message: /unsupported operator "equals-ignore-case"/,
    },
    { case: 'cidr', pattern: { ip: [{ cidr: '10.0.0.0/24' }] }, message: /unsupported operator "cidr"/ },
    { case: '$or', pattern: { $or: [{ a: ['1'] }, { b: ['2'] }] }, message: /unsupported operator "\$or"/ },
    {
      case: 'prefix with equals-ignore-case',
      pattern: { sk: [{ prefix: { 'equals-ignore-case': 'msg#' } }] },
      message: /prefix takes a string/,
    },
    {
      case: 'anything-but with a prefix',
      pattern: { sk: [{ 'anything-but': { prefix: 'MSG#' } }] },
      message: /anything-but takes a string/,
    },
    { case: 'an empty anything-but', pattern: { sk: [{ 'anything-but': [] }] }, message: /anything-but takes/ },
    { case: 'an unknown numeric operator', pattern: { n: [{ numeric: ['>>', 1] }] }, message: /numeric takes \[operator, number\] pairs/ },
    {
      case: 'a numeric bound given as a string',
      pattern: { n: [{ numeric: ['>', '1'] }] },
      message: /numeric takes \[operator, number\] pairs/,
    },
    { case: 'a numeric with three items', pattern: { n: [{ numeric: ['>', 1, '<'] }] }, message: /numeric takes one or two/ },
    { case: 'exists with a string', pattern: { sk: [{ exists: 'yes' }] }, message: /exists takes true or false/ },
    { case: 'two operators in one object', pattern: { sk: [{ prefix: 'a', suffix: 'b' }] }, message: /exactly one operator/ },
    { case: 'a nested array', pattern: { sk: [['MSG#1']] }, message: /expected a string, number, boolean, null or operator object/ },
  ])('$case', ({ pattern, message }) => {
    // Act
    const evaluate = () => matchesFilter(pattern as FilterPattern, {});

    // Assess
    expect(evaluate).toThrow(FilterPatternError);
    expect(evaluate).toThrow(message);
  });
});
