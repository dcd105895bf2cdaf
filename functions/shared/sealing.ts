import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM sealing of secrets stored in the table, under a data key read from a secret
 * (`webhook-key`, `signing-key`). Each sealed value names the key that sealed it and is bound, as
 * GCM associated data, to what it belongs to, so a value copied onto another project's or another
 * record's item does not open there.
 *
 * The key secret holds one key (64 hex or 43 base64 characters: the original format) or a key ring
 * `{"current":"<key>","previous":["<key>",...]}`: new values are sealed with `current`, values
 * sealed with a `previous` key still open, which is what makes the key rotatable
 * (docs/operations.md, "Rotating the data keys").
 */

/** The stored form: ciphertext with its 16-byte tag and the 12-byte IV, base64, and the key's id. */
export interface SealedValue {
  readonly secretCiphertext: string;
  readonly secretIv: string;
  /**
   * Id of the key that sealed it ({@link keyIdOf}). Absent on values sealed before key ids and
   * associated data existed: those are opened without associated data by trying every key.
   */
  readonly secretKeyId?: string;
}

/** What a sealed value belongs to: its associated data reads `<purpose>|<projectId>|<recordId>`. */
export interface SealBinding {
  readonly purpose: 'webhook-secret' | 'push-key' | 'vapid-private-key' | 'project-signing-secret' | 'bridge-secret' | 'pusher-secret';
  readonly projectId: string;
  /** The record within the project (a webhook id, `<environment>#<field>`, ...). */
  readonly recordId: string;
}

export interface DataKey {
  readonly id: string;
  readonly key: Buffer;
}

export interface KeyRing {
  readonly current: DataKey;
  /** Every key, the current one first. */
  readonly all: readonly DataKey[];
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
const HEX_KEY = /^[0-9a-fA-F]{64}$/;
const BASE64_KEY = /^[A-Za-z0-9+/_-]{43}=?$/;

function keyBytes(text: string): Buffer {
  if (HEX_KEY.test(text)) return Buffer.from(text, 'hex');
  if (BASE64_KEY.test(text)) {
    const bytes = Buffer.from(text, 'base64');
    if (bytes.length === 32) return bytes;
  }
  throw new Error('must be 32 bytes given as 64 hex characters or 43 base64 characters');
}

/**
 * A key's id: derived from the key, so the operator names nothing and the same key has the same id
 * in the one-key format and in a ring. A one-way digest, too short and too salted to say anything of
 * the key.
 */
export const keyIdOf = (key: Buffer) => createHash('sha256').update('chat-data-key-id\u0000').update(key).digest('hex').slice(0, 16);

const dataKey = (text: string): DataKey => {
  const key = keyBytes(text);
  return { id: keyIdOf(key), key };
};

/** Parses a key secret's value; throws, saying what is wrong (never echoing a key), when it is neither format. */
export function parseKeyRing(raw: string): KeyRing {
  const text = raw.trim();
  if (!text.startsWith('{')) {
    const only = dataKey(text);
    return { current: only, all: [only] };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error('must be one key or a JSON key ring {"current": "<key>", "previous": ["<key>", ...]}');
  }
  const { current, previous = [] } = (parsed ?? {}) as { current?: unknown; previous?: unknown };
  if (typeof current !== 'string' || !Array.isArray(previous) || !previous.every((key) => typeof key === 'string')) {
    throw new Error('must be a JSON key ring {"current": "<key>", "previous": ["<key>", ...]}');
  }
  const keys = [dataKey(current), ...previous.map((key) => dataKey(key as string))];
  const all = keys.filter((key, index) => keys.findIndex((other) => other.id === key.id) === index);
  return { current: all[0] as DataKey, all };
}

export const associatedData = (binding: SealBinding) => Buffer.from(`${binding.purpose}|${binding.projectId}|${binding.recordId}`, 'utf8');

export function seal(ring: KeyRing, plaintext: string, binding: SealBinding): Required<SealedValue> {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', ring.current.key, iv);
  cipher.setAAD(associatedData(binding));
  const sealed = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return { secretCiphertext: sealed.toString('base64'), secretIv: iv.toString('base64'), secretKeyId: ring.current.id };
}

function decrypt(key: Buffer, sealed: SealedValue, aad: Buffer | undefined): string {
  const bytes = Buffer.from(sealed.secretCiphertext, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.secretIv, 'base64'));
  if (aad) decipher.setAAD(aad);
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  return Buffer.concat([decipher.update(bytes.subarray(0, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
}

/** Thrown when a sealed value does not open: wrong key, another record's value, or tampered. */
export class UnsealError extends Error {}

/**
 * Opens a sealed value with the key it names, bound to `binding`. A value without a key id (sealed
 * before key ids existed) carries no associated data: every key of the ring is tried, GCM's tag
 * telling the right one.
 */
export function open(ring: KeyRing, sealed: SealedValue, binding: SealBinding, secretName: string): string {
  if (sealed.secretKeyId !== undefined) {
    const key = ring.all.find((candidate) => candidate.id === sealed.secretKeyId);
    if (!key) throw new UnsealError(`Sealed with key ${sealed.secretKeyId}, which the ${secretName} secret no longer holds`);
    try {
      return decrypt(key.key, sealed, associatedData(binding));
    } catch {
      throw new UnsealError(`A sealed value does not open as ${binding.purpose} of ${binding.projectId}/${binding.recordId}`);
    }
  }
  for (const key of ring.all) {
    try {
      return decrypt(key.key, sealed, undefined);
    } catch {
      // The next key, if any.
    }
  }
  throw new UnsealError(`A sealed value opens with no key of the ${secretName} secret`);
}

/** Whether a value should be sealed again: in the format without key id and binding, or under a key that is no longer current. */
export const isStale = (ring: KeyRing, sealed: SealedValue) => sealed.secretKeyId !== ring.current.id;
