/**
 * Agent handles: what follows `@agent:` in a mention, and the agent's user id `agent:<handle>`.
 * A handle the creator did not choose is derived from the agent's name: its slug, then the slug
 * with `-2`, `-3`, ... when another agent of the project holds it.
 */

/** `support`, `release-bot`. */
export const AGENT_HANDLE_PATTERN = /^[a-z][a-z0-9-]{1,31}$/;
const MAX_HANDLE_LENGTH = 32;
/** A name with nothing of the handle's alphabet in it (`🤖`, `助手`) still makes a handle. */
const FALLBACK_HANDLE = 'agent';
/** How many suffixes a derived handle tries: past `-99` the name is too common to guess from, and the creator names one. */
export const MAX_DERIVED_HANDLE_SUFFIX = 99;

const trimDashes = (text: string) => text.replace(/^-+|-+$/g, '');

/**
 * The name in the handle's alphabet: accents dropped (`Zoë` → `zoe`), lower case, every run of
 * anything else one `-`; prefixed when it would not start with a letter or be too short.
 */
export function handleBaseOf(name: string): string {
  const slug = trimDashes(
    name
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-'),
  );
  const base = /^[a-z][a-z0-9-]+$/.test(slug) ? slug : trimDashes(`${FALLBACK_HANDLE}-${slug}`);
  return trimDashes(base.slice(0, MAX_HANDLE_LENGTH));
}

/** The `n`th handle derived from `base`: `base` itself, then `base-2` ... (cut so the suffix fits). */
export function derivedHandle(base: string, n: number): string {
  if (n === 1) return base;
  const suffix = `-${n}`;
  return `${trimDashes(base.slice(0, MAX_HANDLE_LENGTH - suffix.length))}${suffix}`;
}

/** What every derived handle of `base` begins with, for one Query of the claims that could collide. */
export const derivedHandlePrefix = (base: string) => trimDashes(base.slice(0, MAX_HANDLE_LENGTH - `-${MAX_DERIVED_HANDLE_SUFFIX}`.length));
