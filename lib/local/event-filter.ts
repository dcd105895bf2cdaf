/**
 * Lambda event filtering (https://docs.aws.amazon.com/lambda/latest/dg/invocation-eventfiltering.html)
 * for the local stream poller: the same pattern objects the wiring table hands to CDK's
 * `FilterCriteria.filter({...})`, evaluated against a record as Lambda sees it (DynamoDB values in
 * attribute-value JSON, `{ sk: { S: 'MSG#…' } }`).
 *
 * Patterns are compiled once, when the poller starts, so an operator this module does not implement
 * throws there instead of silently letting records through (or holding them back) at run time.
 */

/** One filter pattern: field names mapping to nested patterns or to arrays of matchers. */
export type FilterPattern = Readonly<Record<string, unknown>>;

/** Tells whether a record passes. */
export type RecordPredicate = (record: unknown) => boolean;

/** A pattern this module cannot evaluate: malformed, or using an operator it does not implement. */
export class FilterPatternError extends Error {
  override readonly name = 'FilterPatternError';
}

type ValueMatcher = (value: unknown) => boolean;

const NUMERIC_OPERATORS = new Set(['<', '<=', '=', '>', '>=']);

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type Primitive = string | number | boolean | null;

function isPrimitive(value: unknown): value is Primitive {
  return value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

/**
 * Whether a field "exists" for the `exists` operator. As on AWS, only leaves count: a DynamoDB
 * attribute `{ S: 'x' }` is an object, so `{ deletedAt: [{ exists: true }] }` never matches it and
 * the pattern has to reach down to the type, `{ deletedAt: { S: [{ exists: true }] } }`.
 */
function isLeaf(value: unknown): boolean {
  return isPrimitive(value) || (Array.isArray(value) && value.some(isPrimitive));
}

/** A record array (a DynamoDB string set, say) matches when any of its elements does. */
function anyElement(match: (value: Primitive) => boolean): ValueMatcher {
  return (value) =>
    Array.isArray(value) ? value.some((element) => isPrimitive(element) && match(element)) : isPrimitive(value) && match(value);
}

function describe(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

function compileNumeric(operand: unknown, at: string): ValueMatcher {
  if (!Array.isArray(operand) || (operand.length !== 2 && operand.length !== 4)) {
    throw new FilterPatternError(`${at}: numeric takes one or two [operator, number] pairs, got ${describe(operand)}`);
  }
  const comparisons: ((value: number) => boolean)[] = [];
  for (let index = 0; index < operand.length; index += 2) {
    const operator = operand[index];
    const bound = operand[index + 1];
    if (typeof operator !== 'string' || !NUMERIC_OPERATORS.has(operator) || typeof bound !== 'number' || !Number.isFinite(bound)) {
      throw new FilterPatternError(`${at}: numeric takes [operator, number] pairs with one of < <= = > >=, got ${describe(operand)}`);
    }
    comparisons.push(
      {
        '<': (value: number) => value < bound,
        '<=': (value: number) => value <= bound,
        '=': (value: number) => value === bound,
        '>': (value: number) => value > bound,
        '>=': (value: number) => value >= bound,
      }[operator as '<' | '<=' | '=' | '>' | '>='],
    );
  }
  // Only JSON numbers: DynamoDB numbers travel as strings (`{ N: '42' }`) and AWS does not convert
  // them, so a numeric filter on an `N` attribute never matches there either.
  return anyElement((value) => typeof value === 'number' && comparisons.every((compare) => compare(value)));
}

function compileAnythingBut(operand: unknown, at: string): ValueMatcher {
  const excluded = Array.isArray(operand) ? operand : [operand];
  if (
    excluded.length === 0 ||
    !excluded.every((value) => typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value)))
  ) {
    // `{ 'anything-but': { prefix: … } }` and friends are valid on AWS but not implemented here.
    throw new FilterPatternError(`${at}: anything-but takes a string, a number or a non-empty array of them, got ${describe(operand)}`);
  }
  return anyElement((value) => !excluded.includes(value as string | number));
}

function compileString(operator: 'prefix' | 'suffix', operand: unknown, at: string): ValueMatcher {
  if (typeof operand !== 'string') {
    // `{ prefix: { 'equals-ignore-case': … } }` is valid on AWS but not implemented here.
    throw new FilterPatternError(`${at}: ${operator} takes a string, got ${describe(operand)}`);
  }
  return operator === 'prefix'
    ? anyElement((value) => typeof value === 'string' && value.startsWith(operand))
    : anyElement((value) => typeof value === 'string' && value.endsWith(operand));
}

function compileOperator(rule: Record<string, unknown>, at: string): ValueMatcher {
  const keys = Object.keys(rule);
  const [operator] = keys;
  if (keys.length !== 1 || operator === undefined) {
    throw new FilterPatternError(`${at}: a matcher object holds exactly one operator, got ${describe(rule)}`);
  }
  const operand = rule[operator];
  switch (operator) {
    case 'prefix':
    case 'suffix':
      return compileString(operator, operand, at);
    case 'exists':
      if (typeof operand !== 'boolean') throw new FilterPatternError(`${at}: exists takes true or false, got ${describe(operand)}`);
      return (value) => isLeaf(value) === operand;
    case 'anything-but':
      return compileAnythingBut(operand, at);
    case 'numeric':
      return compileNumeric(operand, at);
    default:
      throw new FilterPatternError(`${at}: unsupported operator "${operator}" (supported: prefix, suffix, exists, anything-but, numeric)`);
  }
}

/** An array of matchers: the field passes when any of them matches. */
function compileRule(rule: readonly unknown[], at: string): ValueMatcher {
  if (rule.length === 0) throw new FilterPatternError(`${at}: an empty array matches nothing`);
  const matchers = rule.map((element): ValueMatcher => {
    if (isPrimitive(element)) return anyElement((value) => value === element);
    if (isPlainObject(element)) return compileOperator(element, at);
    throw new FilterPatternError(`${at}: expected a string, number, boolean, null or operator object, got ${describe(element)}`);
  });
  return (value) => matchers.some((matches) => matches(value));
}

/** An object pattern: every field must pass. `at` names the path for error messages. */
function compileObject(pattern: unknown, at: string): ValueMatcher {
  if (!isPlainObject(pattern)) throw new FilterPatternError(`${at || 'pattern'}: expected an object, got ${describe(pattern)}`);
  const fields = Object.entries(pattern).map(([key, rule]): [string, ValueMatcher] => {
    const path = at ? `${at}.${key}` : key;
    if (key.startsWith('$'))
      throw new FilterPatternError(`${path}: unsupported operator "${key}" (give the consumer one pattern per alternative)`);
    if (Array.isArray(rule)) return [key, compileRule(rule, path)];
    if (isPlainObject(rule)) return [key, compileObject(rule, path)];
    throw new FilterPatternError(`${path}: expected an array of matchers or a nested pattern, got ${describe(rule)}`);
  });
  if (fields.length === 0) throw new FilterPatternError(`${at || 'pattern'}: an empty pattern`);
  return (node) => {
    const object = isPlainObject(node) ? node : undefined;
    // A missing field is `undefined`: only `exists: false` (or a nested pattern made of it) matches it.
    return fields.every(([key, matches]) => matches(object && Object.hasOwn(object, key) ? object[key] : undefined));
  };
}

/**
 * Compiles one Lambda event filter pattern.
 *
 * @throws {@link FilterPatternError} when the pattern is malformed or uses an operator not
 * implemented here (`wildcard`, `equals-ignore-case`, `cidr`, `$or`, `anything-but` with an object).
 */
export function compileFilter(pattern: FilterPattern): RecordPredicate {
  return compileObject(pattern, '');
}

/**
 * Compiles a consumer's filter criteria: a record passes when any pattern matches it, and a
 * consumer without patterns gets every record, as with Lambda's `FilterCriteria`.
 *
 * @throws {@link FilterPatternError} as {@link compileFilter} does, for the first bad pattern.
 */
export function compileFilters(patterns: readonly FilterPattern[]): RecordPredicate {
  if (patterns.length === 0) return () => true;
  const predicates = patterns.map((pattern, index) => {
    try {
      return compileFilter(pattern);
    } catch (error) {
      if (error instanceof FilterPatternError) throw new FilterPatternError(`filter ${index + 1}: ${error.message}`);
      throw error;
    }
  });
  return (record) => predicates.some((matches) => matches(record));
}

/**
 * Whether `record` (a stream record as Lambda sees it) matches one Lambda event filter `pattern`.
 * Compiles the pattern on each call: hold on to {@link compileFilter}'s predicate on hot paths.
 *
 * @throws {@link FilterPatternError} when the pattern is malformed or unsupported, whatever the record.
 */
export function matchesFilter(pattern: FilterPattern, record: unknown): boolean {
  return compileFilter(pattern)(record);
}
