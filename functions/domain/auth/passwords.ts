import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';

const KEY_LENGTH = 64;
const SALT_LENGTH = 16;

interface ScryptCost {
  readonly N: number;
  readonly r: number;
  readonly p: number;
}

/**
 * OWASP's current minimum for scrypt. One derivation takes 128 × N × r = 128 MiB, which the
 * sign-in function's 512 MB leaves room for; hashes stored with less are replaced on the next
 * sign-in ({@link needsRehash}).
 */
export const PASSWORD_COST: ScryptCost = { N: 2 ** 17, r: 8, p: 1 };

/**
 * Node refuses a derivation needing more than `maxmem`; twice the current cost's need, so a stored
 * hash can never make an instance allocate more than that.
 */
const MAX_MEMORY_BYTES = 2 * 128 * PASSWORD_COST.N * PASSWORD_COST.r;

function derive(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(password, salt, KEY_LENGTH, { ...cost, maxmem: MAX_MEMORY_BYTES }, (error, key) => (error ? reject(error) : resolve(key))),
  );
}

const format = (cost: ScryptCost, salt: Buffer, key: Buffer) =>
  ['scrypt', cost.N, cost.r, cost.p, salt.toString('base64url'), key.toString('base64url')].join('$');

/** `scrypt$N$r$p$salt$hash`, so the parameters can be raised later without breaking stored hashes. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  return format(PASSWORD_COST, salt, await derive(password, salt, PASSWORD_COST));
}

/**
 * Stands in for the hash of a user who has none (unknown, or without credentials), so that their
 * sign-in costs the same derivation as a known user's. No password derives to an all-zero key.
 */
const ABSENT_USER_HASH = format(PASSWORD_COST, randomBytes(SALT_LENGTH), Buffer.alloc(KEY_LENGTH));

/** Verifies against `stored`, or, when there is none, spends the same derivation and answers false. */
export async function verifyPassword(password: string, stored: string | undefined): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = (stored ?? ABSENT_USER_HASH).split('$');
  if (scheme !== 'scrypt' || !n || !r || !p || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await derive(password, Buffer.from(salt, 'base64url'), { N: Number(n), r: Number(r), p: Number(p) });
  return stored !== undefined && actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** True when `stored` was made with other parameters than today's, so a verified password should be hashed again. */
export function needsRehash(stored: string): boolean {
  const [scheme, n, r, p] = stored.split('$');
  return scheme !== 'scrypt' || Number(n) !== PASSWORD_COST.N || Number(r) !== PASSWORD_COST.r || Number(p) !== PASSWORD_COST.p;
}
