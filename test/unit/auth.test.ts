import { describe, expect, it } from 'vitest';
import { hashPassword, verifyPassword } from '#domain/auth/passwords';
import { API_KEY_PATTERN, hasRole, type Principal } from '#shared/auth';
import type { Role } from '#wiring';

const user = (...roles: Role[]): Principal => ({ kind: 'user', projectId: 'p1', userId: 'u', roles });

describe('roles', () => {
  it.each([
    [['guest'], 'member', false],
    [['member'], 'member', true],
    [['member'], 'moderator', false],
    [['moderator'], 'moderator', true],
    [['admin'], 'moderator', true],
    [['owner'], 'admin', true],
    [['member', 'admin'], 'admin', true],
    [[], 'guest', false],
  ] as const)('%j meets %s: %s', (roles, minRole, expected) => {
    expect(hasRole(user(...roles), minRole)).toBe(expected);
  });

  it('a service principal passes every role check', () => {
    expect(hasRole({ kind: 'service', projectId: 'p1' }, 'owner')).toBe(true);
  });
});

describe('passwords', () => {
  it('verify against their scrypt hash and not otherwise', async () => {
    const stored = await hashPassword('correct horse battery');
    expect(stored.startsWith('scrypt$')).toBe(true);
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(await verifyPassword('correct horse batterY', stored)).toBe(false);
    expect(await verifyPassword('x', 'not-a-hash')).toBe(false);
  });

  it('salt every hash', async () => {
    expect(await hashPassword('same')).not.toBe(await hashPassword('same'));
  });
});

describe('API key format', () => {
  it('carries the project id', () => {
    expect(API_KEY_PATTERN.exec('ck_demo_abcdefghijklmnopqrstuv')?.[1]).toBe('demo');
    expect(API_KEY_PATTERN.test('ck_demo_short')).toBe(false);
    expect(API_KEY_PATTERN.test('sk_demo_abcdefghijklmnopqrstuv')).toBe(false);
  });
});
