import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { fieldValue, keyOf, oddChar } from './arbitraries';

/**
 * What the fuzz suite knows of a body it was never told about. Handlers keep their zod schemas to
 * themselves (nothing in the wiring table or the handler modules exports them), so the suite asks
 * each route: the `validation_failed` details of an empty object name the required fields and
 * their types, and those of an object holding every word of the API's vocabulary name the fields
 * the route knows (a strict body calls the others "unknown fields"). A new route is learnt the
 * same way, with no test code of its own.
 */

/** One entry of `error.details` of a `validation_failed` answer (HTTP) or error frame. */
export interface Detail {
  readonly field: string;
  readonly message: string;
}

/** The type a field's validation message says it expects. */
export type Hint =
  | { readonly kind: 'string' | 'number' | 'boolean' | 'array' | 'object' | 'unknown' }
  | { readonly kind: 'enum'; readonly options: readonly unknown[] };

export interface Field {
  readonly hint: Hint;
  readonly required: boolean;
}

export interface Shape {
  readonly fields: ReadonlyMap<string, Field>;
  /** Unknown keys are refused (a strict object). */
  readonly strict: boolean;
}

export const emptyShape: Shape = { fields: new Map(), strict: false };

/**
 * Reads the service's validation messages (`functions/shared/schema-messages.ts`): "is required
 * (a string)", "must be an integer", "must be one of `a`, `b` or `c`".
 */
export function hintOf(message: string): Hint {
  const options = /one of (.+?)(?:\)|;|$)/.exec(message)?.[1];
  if (options) {
    const parsed = [...options.matchAll(/`([^`]*)`/g)].map((match) => match[1] as string);
    if (parsed.length > 0) return { kind: 'enum', options: parsed };
  }
  const noun = /^(?:must be|is required \() ?(a string|a number|an integer|true or false|an array|an object)/.exec(message)?.[1];
  switch (noun) {
    case 'a string':
      return { kind: 'string' };
    case 'a number':
    case 'an integer':
      return { kind: 'number' };
    case 'true or false':
      return { kind: 'boolean' };
    case 'an array':
      return { kind: 'array' };
    case 'an object':
      return { kind: 'object' };
    default:
      return { kind: 'unknown' };
  }
}

/**
 * The API's words: identifiers in backticks and JSON keys of `docs/api.md`. Used as candidate
 * field and query names, and as keys of generated objects.
 */
export function apiVocabulary(repoRoot: string): string[] {
  const text = readFileSync(join(repoRoot, 'docs', 'api.md'), 'utf8');
  const words = new Set<string>();
  for (const match of text.matchAll(/`([A-Za-z_][A-Za-z0-9_]{0,40})`/g)) if (match[1]) words.add(match[1]);
  for (const match of text.matchAll(/"([A-Za-z_][A-Za-z0-9_]{0,40})"\s*:/g)) if (match[1]) words.add(match[1]);
  for (const match of text.matchAll(/[?&]([A-Za-z_][A-Za-z0-9_]{0,40})=/g)) if (match[1]) words.add(match[1]);
  return [...words].sort();
}

/** The top-level field a detail names, under `prefix` (`body.`, `query.`, or '' for frames). */
function fieldName(detail: Detail, prefix: string): string | undefined {
  if (!detail.field.startsWith(prefix)) return undefined;
  const name = detail.field.slice(prefix.length).split('.')[0];
  return name ? name : undefined;
}

/** The keys of "unknown fields `a`, `b` (did you mean `c`?)": the suggestions are known keys, not refused ones. */
const unrecognized = (details: readonly Detail[]) =>
  details
    .filter((detail) => /^unknown fields? /.test(detail.message))
    .flatMap((detail) =>
      [...detail.message.replace(/ \(did you mean `[^`]*`\?\)/g, '').matchAll(/`([^`]*)`/g)].map((match) => match[1] as string),
    );

/**
 * Learns a shape by two probes. `probe` sends an object and returns the details of the refusal
 * (empty when it was not a `validation_failed`). `base` holds fields the probe must keep (a
 * frame's `type`).
 */
export async function discoverShape(
  probe: (value: Record<string, unknown>) => Promise<readonly Detail[]>,
  options: { prefix: string; vocabulary: readonly string[]; base?: Record<string, unknown> },
): Promise<Shape> {
  const base = options.base ?? {};
  const fields = new Map<string, Field>();
  for (const detail of await probe(base)) {
    const name = fieldName(detail, options.prefix);
    if (name && !(name in base)) fields.set(name, { hint: hintOf(detail.message), required: /^is required/.test(detail.message) });
  }
  const candidates = options.vocabulary.filter((word) => !(word in base));
  const everything = { ...Object.fromEntries(candidates.map((word) => [word, {}])), ...base };
  const details = await probe(everything);
  const refused = new Set(unrecognized(details));
  const strict = refused.size > 0;
  for (const detail of details) {
    const name = fieldName(detail, options.prefix);
    if (name && !(name in base) && !refused.has(name) && !fields.has(name)) {
      fields.set(name, { hint: hintOf(detail.message), required: false });
    }
  }
  if (strict) {
    for (const word of candidates)
      if (!refused.has(word) && !fields.has(word)) fields.set(word, { hint: { kind: 'object' }, required: false });
  }
  return { fields, strict };
}

/** Values to try for a field, in order: the fixtures' ids and words first for strings. */
export function candidatesFor(hint: Hint, strings: readonly string[]): unknown[] {
  switch (hint.kind) {
    case 'string':
      return [...strings];
    case 'number':
      return [1, 2, 60, 3600];
    case 'boolean':
      return [false, true];
    case 'array':
      return [[], ...strings.map((string) => [string])];
    case 'object':
      return [{}];
    case 'enum':
      return [...hint.options];
    default:
      return [...strings, 1, true, {}, []];
  }
}

/** What a probe learnt: whether validation let the value through, and if not, its details. */
export interface ProbeAnswer {
  readonly accepted: boolean;
  readonly details: readonly Detail[];
}

/**
 * Finds a value validation lets through, guided by its details: start from the first candidate of
 * each field (`all` fields or only the required ones), and while the answer names fields, move each
 * named field to its next candidate (an optional one runs out and is left out; a required one
 * runs out and there is no seed). Bounded probes; `undefined` when nothing passed.
 */
export async function repairObject(
  shape: Shape,
  probe: (value: Record<string, unknown>) => Promise<ProbeAnswer>,
  options: { prefix: string; strings: readonly string[]; fields: 'required' | 'all'; base?: Record<string, unknown>; maxProbes?: number },
): Promise<Record<string, unknown> | undefined> {
  const choice = new Map<string, number>();
  for (const [name, field] of shape.fields) if (field.required || options.fields === 'all') choice.set(name, 0);
  const build = () => {
    const value: Record<string, unknown> = { ...options.base };
    for (const [name, index] of choice) {
      const field = shape.fields.get(name);
      if (field) value[name] = candidatesFor(field.hint, options.strings)[index];
    }
    return value;
  };
  for (let probes = 0; probes < (options.maxProbes ?? 25); probes++) {
    const value = build();
    const answer = await probe(value);
    if (answer.accepted) return value;
    const named = new Set(answer.details.map((detail) => fieldName(detail, options.prefix)).filter((name) => name !== undefined));
    if (named.size === 0) return undefined;
    for (const name of named) {
      const field = shape.fields.get(name);
      if (!field) return undefined;
      const next = (choice.get(name) ?? -1) + 1;
      if (next < candidatesFor(field.hint, options.strings).length) choice.set(name, next);
      else if (field.required) return undefined;
      else choice.delete(name);
    }
  }
  return undefined;
}

/** A value the field would accept, as far as its hint tells: `strings` are the fixtures' ids and a few well-formed words. */
export function plausible(hint: Hint, strings: readonly string[]): fc.Arbitrary<unknown> {
  const string = fc.constantFrom(...strings);
  switch (hint.kind) {
    case 'string':
      return string;
    case 'number':
      return fc.constantFrom(1, 2, 60, 3600);
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(string, { maxLength: 2 });
    case 'object':
      return fc.oneof(fc.constant({}), fc.dictionary(fc.constantFrom('k', 'text'), string, { maxKeys: 2 }));
    case 'enum':
      return fc.constantFrom(...hint.options);
    default:
      return fc.oneof(string, fc.constantFrom(1, true), fc.constant({}));
  }
}

/**
 * `value` with `chars` inserted at a position taken from `at`: into a string, or into one string
 * of an array or object. A near-valid value (a good URL with a NUL in it) finds the checks that
 * only look at the shape.
 */
export function corrupt(value: unknown, chars: string, at: number): unknown {
  if (typeof value === 'string') {
    const index = at % (value.length + 1);
    return `${value.slice(0, index)}${chars}${value.slice(index)}`;
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return [chars];
    const index = at % value.length;
    return value.map((item, i) => (i === index ? corrupt(item, chars, at) : item));
  }
  if (value && typeof value === 'object') {
    const keys = Object.keys(value);
    const key = keys[at % Math.max(keys.length, 1)];
    if (key === undefined) return { [chars]: chars };
    return { ...value, [key]: corrupt((value as Record<string, unknown>)[key], chars, at) };
  }
  return value;
}

/** Odd characters to insert with {@link corrupt}. */
export const corruption = fc.tuple(fc.string({ unit: oddChar, minLength: 1, maxLength: 3 }), fc.nat());

type Mutation =
  | { readonly op: 'drop'; readonly key: string }
  | { readonly op: 'corrupt'; readonly key: string; readonly chars: string; readonly at: number }
  | { readonly op: 'set'; readonly key: string; readonly value: unknown }
  | { readonly op: 'add'; readonly key: string; readonly value: unknown };

/**
 * An object close to what the shape accepts (one of the `seeds` validation let through, or each
 * required field and optional ones at random with plausible values), then changed by up to three mutations: a field dropped, a field set to a
 * wrong-typed, odd, huge or deep value, odd characters slipped into a field's good value, or an
 * unknown key added. No mutation at all is possible
 * too, so some requests pass validation and go further in.
 */
export function mutatedObject(
  shape: Shape,
  strings: readonly string[],
  vocabulary: readonly string[],
  seeds: readonly Record<string, unknown>[] = [],
): fc.Arbitrary<Record<string, unknown>> {
  const entries = [...shape.fields.entries()];
  const plausibleRecord = fc.record(
    Object.fromEntries(
      entries.map(([name, field]) => [name, field.required ? plausible(field.hint, strings) : fc.option(plausible(field.hint, strings))]),
    ),
  );
  const base: fc.Arbitrary<Record<string, unknown>> =
    seeds.length > 0
      ? fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...seeds) }, { weight: 1, arbitrary: plausibleRecord })
      : plausibleRecord;
  const known = entries.map(([name]) => name);
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    ...(known.length > 0
      ? [
          fc.record({ op: fc.constant('drop' as const), key: fc.constantFrom(...known) }),
          fc.record({ op: fc.constant('set' as const), key: fc.constantFrom(...known), value: fieldValue(vocabulary) }),
          fc.record({ op: fc.constant('set' as const), key: fc.constantFrom(...known), value: fieldValue(vocabulary) }),
          corruption.chain(([chars, at]) =>
            fc.record({
              op: fc.constant('corrupt' as const),
              key: fc.constantFrom(...known),
              chars: fc.constant(chars),
              at: fc.constant(at),
            }),
          ),
          corruption.chain(([chars, at]) =>
            fc.record({
              op: fc.constant('corrupt' as const),
              key: fc.constantFrom(...known),
              chars: fc.constant(chars),
              at: fc.constant(at),
            }),
          ),
        ]
      : []),
    fc.record({ op: fc.constant('add' as const), key: keyOf(vocabulary), value: fieldValue(vocabulary) }),
  );
  return fc.tuple(base, fc.array(mutation, { maxLength: 3 })).map(([start, mutations]) => {
    const object: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(start)) if (value !== null) object[name] = value;
    for (const mutation of mutations) {
      if (mutation.op === 'drop') delete object[mutation.key];
      else if (mutation.op === 'corrupt') object[mutation.key] = corrupt(object[mutation.key] ?? '', mutation.chars, mutation.at);
      // defineProperty, so that `__proto__` becomes an own key that JSON.stringify writes.
      else Object.defineProperty(object, mutation.key, { value: mutation.value, enumerable: true, configurable: true, writable: true });
    }
    return object;
  });
}
