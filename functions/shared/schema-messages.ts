import type { core } from 'zod/mini';
import { closestMatch } from '#shared/did-you-mean';

/**
 * What a zod issue says, in plain English, for every schema of the service (`#shared/schema`
 * installs it as zod's locale): the `message` of each `{ field, message }` in a `validation_failed`
 * answer, a frame's error details, a setting that does not parse. Each message completes the field
 * it belongs to ("body.content: is required (a string)", "query.limit: must be an integer"), where
 * zod's own English reads "Invalid input: expected string, received undefined". Names and string
 * values are in backticks; a near miss of a known key or value gets "did you mean …?". A message
 * written on a schema (`z.regex(pattern, 'must be a project id')`) still wins.
 */

type Issue = core.$ZodRawIssue;

const NOUNS: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  bigint: 'an integer',
  boolean: 'true or false',
  array: 'an array',
  tuple: 'an array',
  object: 'an object',
  record: 'an object',
  map: 'an object',
  set: 'an array',
  null: 'null',
  date: 'a date',
};

const FORMATS: Readonly<Record<string, string>> = {
  url: 'a URL',
  email: 'an email address',
  uuid: 'a UUID',
  datetime: 'an ISO 8601 date and time',
  date: 'an ISO 8601 date (YYYY-MM-DD)',
  time: 'an ISO 8601 time',
  base64: 'base64',
  base64url: 'base64url',
  ipv4: 'an IPv4 address',
  ipv6: 'an IPv6 address',
  jwt: 'a JWT',
};

const UNITS: Readonly<Record<string, [one: string, many: string]>> = {
  string: ['character', 'characters'],
  array: ['item', 'items'],
  set: ['item', 'items'],
  file: ['byte', 'bytes'],
};

/** A value as a message shows it: strings in backticks, anything else as written in JSON. */
const shown = (value: unknown) =>
  typeof value === 'string' ? `\`${value}\`` : typeof value === 'bigint' ? String(value) : JSON.stringify(value);

/** `a`, `b` or `c`. */
function alternatives(values: readonly unknown[]): string {
  const all = values.map(shown);
  return all.length <= 1 ? (all[0] ?? '') : `${all.slice(0, -1).join(', ')} or ${all.at(-1)}`;
}

const suggestion = (input: unknown, known: readonly unknown[]) => {
  if (typeof input !== 'string') return '';
  const near = closestMatch(
    input,
    known.filter((value): value is string => typeof value === 'string'),
  );
  return near === undefined ? '' : `; did you mean \`${near}\`?`;
};

const count = (amount: number | bigint, origin: string) => {
  const unit = UNITS[origin];
  if (!unit) return String(amount);
  return `${amount} ${Number(amount) === 1 ? unit[0] : unit[1]}`;
};

function tooBig(issue: Extract<Issue, { code: 'too_big' }>): string {
  const amount = count(issue.maximum, issue.origin);
  const sized = issue.origin in UNITS;
  if (issue.exact) return sized ? `must have exactly ${amount}` : `must be exactly ${amount}`;
  if (sized) return issue.origin === 'string' ? `must be at most ${amount}` : `must have at most ${amount}`;
  return issue.inclusive === false ? `must be less than ${amount}` : `must be at most ${amount}`;
}

function tooSmall(issue: Extract<Issue, { code: 'too_small' }>): string {
  const amount = count(issue.minimum, issue.origin);
  const sized = issue.origin in UNITS;
  if (issue.exact) return sized ? `must have exactly ${amount}` : `must be exactly ${amount}`;
  if (sized && Number(issue.minimum) === 1) return 'must not be empty';
  if (sized) return issue.origin === 'string' ? `must be at least ${amount}` : `must have at least ${amount}`;
  return issue.inclusive === false ? `must be greater than ${amount}` : `must be at least ${amount}`;
}

function invalidFormat(issue: Extract<Issue, { code: 'invalid_format' }>): string {
  const detail = issue as { format: string; pattern?: string; prefix?: string; suffix?: string; includes?: string };
  switch (detail.format) {
    case 'regex':
      return detail.pattern ? `must match the pattern ${detail.pattern}` : 'is not in the expected format';
    case 'starts_with':
      return `must start with ${shown(detail.prefix)}`;
    case 'ends_with':
      return `must end with ${shown(detail.suffix)}`;
    case 'includes':
      return `must include ${shown(detail.includes)}`;
    default:
      return `must be ${FORMATS[detail.format] ?? `a valid ${detail.format}`}`;
  }
}

/** The keys a strict object knows, from the schema that raised the issue. */
const knownKeys = (issue: Issue): string[] =>
  Object.keys((issue.inst as { _zod?: { def?: { shape?: Record<string, unknown> } } } | undefined)?._zod?.def?.shape ?? {});

function unknownKeys(issue: Extract<Issue, { code: 'unrecognized_keys' }>): string {
  const known = knownKeys(issue);
  const named = issue.keys.map((key) => {
    const near = closestMatch(key, known);
    return near === undefined ? shown(key) : `${shown(key)} (did you mean \`${near}\`?)`;
  });
  return `${issue.keys.length === 1 ? 'unknown field' : 'unknown fields'} ${named.join(', ')}`;
}

/** The message of one issue; see the module's comment. */
export function plainIssueMessage(issue: Issue): string {
  switch (issue.code) {
    case 'invalid_type': {
      const noun = NOUNS[issue.expected] ?? `a ${issue.expected}`;
      if (issue.input === undefined) return issue.expected === 'never' ? 'is not allowed' : `is required (${noun})`;
      if (issue.expected === 'never' || issue.expected === 'undefined') return 'is not allowed';
      return `must be ${noun}`;
    }
    case 'invalid_value': {
      if (issue.values.length === 1)
        return issue.input === undefined ? `is required (${shown(issue.values[0])})` : `must be ${shown(issue.values[0])}`;
      const allowed = `one of ${alternatives(issue.values)}`;
      if (issue.input === undefined) return `is required (${allowed})`;
      return `must be ${allowed}${suggestion(issue.input, issue.values)}`;
    }
    case 'too_big':
      return tooBig(issue);
    case 'too_small':
      return tooSmall(issue);
    case 'invalid_format':
      return invalidFormat(issue);
    case 'not_multiple_of':
      return `must be a multiple of ${issue.divisor}`;
    case 'unrecognized_keys':
      return unknownKeys(issue);
    case 'invalid_union': {
      if ('options' in issue && Array.isArray(issue.options) && issue.options.length > 0) {
        // A discriminated union's issue is on its discriminator, with the whole object as input.
        const { input, discriminator } = issue as { input: unknown; discriminator?: string };
        const value =
          discriminator && typeof input === 'object' && input !== null ? (input as Record<string, unknown>)[discriminator] : input;
        if (value === undefined) return `is required (one of ${alternatives(issue.options)})`;
        return `must be one of ${alternatives(issue.options)}${suggestion(value, issue.options)}`;
      }
      if (issue.inclusive === false) return 'matches more than one of the accepted forms';
      return issue.input === undefined ? 'is required' : 'matches none of the accepted forms';
    }
    case 'invalid_key':
      return 'has a key that is not allowed';
    case 'invalid_element':
      return 'has an entry that is not valid';
    default:
      return 'is not valid';
  }
}
