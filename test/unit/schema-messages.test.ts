import { describe, expect, it } from 'vitest';
import { messageWithRoomSchema } from '#domain/messages/message-input';
import * as z from '#shared/schema';

/**
 * What the service's zod schemas say of bad input (`functions/shared/schema-messages.ts`, installed
 * by `#shared/schema`): plain English that completes the field's name, not zod's "Invalid input:
 * expected string, received undefined", and a near miss of a known key or value suggested.
 */

const messagesOf = (schema: z.ZodMiniType, value: unknown) => {
  const parsed = schema.safeParse(value);
  if (parsed.success) throw new Error('the value was accepted');
  return parsed.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
};

describe('plain messages', () => {
  it.each([
    { case: 'a missing string', schema: z.object({ a: z.string() }), value: {}, path: 'a', message: 'is required (a string)' },
    { case: 'a missing body', schema: z.strictObject({ a: z.string() }), value: undefined, path: '', message: 'is required (an object)' },
    { case: 'a number for a string', schema: z.string(), value: 1, path: '', message: 'must be a string' },
    { case: 'a fraction for an integer', schema: z.number().check(z.int()), value: 1.5, path: '', message: 'must be an integer' },
    {
      case: 'an integer past 2^53',
      schema: z.number().check(z.int()),
      value: 2 ** 60,
      path: '',
      message: 'must be at most 9007199254740991',
    },
    { case: 'text for a number', schema: z.coerce.number(), value: 'abc', path: '', message: 'must be a number' },
    { case: 'a string for a boolean', schema: z.boolean(), value: 'yes', path: '', message: 'must be true or false' },
    { case: 'an object for an array', schema: z.array(z.string()), value: {}, path: '', message: 'must be an array' },
    { case: 'an empty string', schema: z.string().check(z.minLength(1)), value: '', path: '', message: 'must not be empty' },
    { case: 'an empty array', schema: z.array(z.string()).check(z.minLength(1)), value: [], path: '', message: 'must not be empty' },
    { case: 'a short string', schema: z.string().check(z.minLength(8)), value: 'abc', path: '', message: 'must be at least 8 characters' },
    { case: 'a long string', schema: z.string().check(z.maxLength(4)), value: 'abcde', path: '', message: 'must be at most 4 characters' },
    {
      case: 'a long array',
      schema: z.array(z.string()).check(z.maxLength(2)),
      value: ['a', 'b', 'c'],
      path: '',
      message: 'must have at most 2 items',
    },
    { case: 'a small number', schema: z.number().check(z.minimum(1)), value: 0, path: '', message: 'must be at least 1' },
    { case: 'a big number', schema: z.number().check(z.maximum(100)), value: 101, path: '', message: 'must be at most 100' },
    { case: 'zero for a positive number', schema: z.number().check(z.positive()), value: 0, path: '', message: 'must be greater than 0' },
    {
      case: 'a pattern missed',
      schema: z.string().check(z.regex(/^[a-z]+$/)),
      value: 'A',
      path: '',
      message: 'must match the pattern /^[a-z]+$/',
    },
    { case: 'a bad URL', schema: z.url(), value: 'not a url', path: '', message: 'must be a URL' },
    {
      case: 'a missing enum',
      schema: z.object({ t: z.enum(['a', 'b']) }),
      value: {},
      path: 't',
      message: 'is required (one of `a` or `b`)',
    },
    { case: 'a wrong literal', schema: z.literal('message'), value: 'mesage', path: '', message: 'must be `message`' },
  ])('says "$message" for $case', ({ schema, value, path, message }) => {
    // Act
    const issues = messagesOf(schema, value);

    // Assess
    expect(issues).toEqual([{ path, message }]);
  });

  it('lists an enum plainly and suggests the value meant', () => {
    // Prepare
    const type = z.enum(['public', 'group', 'dm']);

    // Act
    const typo = messagesOf(type, 'grop');
    const unlike = messagesOf(type, 'channel');

    // Assess
    expect(typo).toEqual([{ path: '', message: 'must be one of `public`, `group` or `dm`; did you mean `group`?' }]);
    expect(unlike).toEqual([{ path: '', message: 'must be one of `public`, `group` or `dm`' }]);
  });

  it('names the unknown keys of a strict body and suggests the key meant, keeping the path', () => {
    // Act
    const single = messagesOf(messageWithRoomSchema, { roomId: 'r', content: 'hi', parentId: 1 });
    const nested = messagesOf(z.object({ rows: z.array(z.strictObject({ userId: z.string() })) }), {
      rows: [{ userId: 'a' }, { userId: 'b', user_id: 'b', bogusField: 1 }],
    });

    // Assess
    expect(single).toEqual([{ path: '', message: 'unknown field `parentId` (did you mean `parent_id`?)' }]);
    expect(nested).toEqual([{ path: 'rows.1', message: 'unknown fields `user_id` (did you mean `userId`?), `bogusField`' }]);
  });

  it('keeps a message written on the schema', () => {
    // Act
    const issues = messagesOf(z.string().check(z.regex(/^\d+$/, 'must be a message id')), 'x');

    // Assess
    expect(issues).toEqual([{ path: '', message: 'must be a message id' }]);
  });

  it('names the missing discriminator of a union and its values', () => {
    // Prepare
    const schema = z.discriminatedUnion('kind', [z.object({ kind: z.literal('web') }), z.object({ kind: z.literal('device') })]);

    // Act
    const missing = messagesOf(schema, {});
    const typo = messagesOf(schema, { kind: 'devise' });

    // Assess
    expect(missing).toEqual([{ path: 'kind', message: 'is required (one of `web` or `device`)' }]);
    expect(typo).toEqual([{ path: 'kind', message: 'must be one of `web` or `device`; did you mean `device`?' }]);
  });
});
