import { beforeAll, describe, expect, it } from 'vitest';
import { unsubscribeToken } from '#domain/digest/unsubscribe-link';
import { api } from '../../support/api';
import {
  createValidationProject,
  describeValidationMatrix,
  drop,
  expectInvalid,
  type RouteRequests,
  set,
  type ValidationProject,
  type Variant,
} from '../../support/matrices/validation-driver';

/** Bad input to the Digest area's routes (preferences, the admin run, the unsubscribe link); the checks are the matrix's (`validation-driver.ts`). */

let fixture: ValidationProject;
/** A genuine unsubscribe link's token of the member, made the way the digest e-mail makes it. */
let token: string;

beforeAll(async () => {
  fixture = await createValidationProject('validation-digest');
  token = await unsubscribeToken(fixture.project.projectId, fixture.memberId);
});

const requests: RouteRequests = {
  GetDigestPreferences: { path: () => '/digest/preferences', auth: () => ({ token: fixture.memberToken }), success: 200 },
  UpdateDigestPreferences: {
    path: () => '/digest/preferences',
    auth: () => ({ token: fixture.memberToken }),
    body: () => ({ enabled: true, email: 'valid@example.com', inAppEnabled: true, webPushEnabled: false, emailEnabled: true }),
    success: 200,
  },
  RunDigest: {
    path: () => '/admin/digest/run',
    auth: () => ({ apiKey: fixture.project.apiKey }),
    body: () => ({ digestDate: '2030-06-15', maxUsers: 1 }),
    success: 202,
  },
  UnsubscribeDigestEmail: { path: () => `/digest/unsubscribe?token=${token}`, auth: () => ({}), success: 200 },
};

const booleanVariants = (key: string): Variant[] => [
  [`${key} a string`, set(key, 'true'), `body.${key}`],
  [`${key} null`, set(key, null), `body.${key}`],
  [`${key} a number`, set(key, 1), `body.${key}`],
];

const fieldVariants: Record<string, Variant[]> = {
  UpdateDigestPreferences: [
    ['email not an address', set('email', 'not an address'), 'body.email'],
    ['email without a domain', set('email', 'someone@'), 'body.email'],
    ['email a number', set('email', 42), 'body.email'],
    ['email of 255 characters', set('email', `${'a'.repeat(243)}@example.com`), 'body.email'],
    ...booleanVariants('enabled'),
    ...booleanVariants('inAppEnabled'),
    ...booleanVariants('webPushEnabled'),
    ...booleanVariants('emailEnabled'),
  ],
  RunDigest: [
    ['digestDate missing', drop('digestDate'), 'body.digestDate'],
    ['digestDate not a calendar date', set('digestDate', '2030-02-30'), 'body.digestDate'],
    ['digestDate a date and time', set('digestDate', '2030-06-15T08:00:00Z'), 'body.digestDate'],
    ['digestDate a number', set('digestDate', 20300615), 'body.digestDate'],
    ['maxUsers zero', set('maxUsers', 0), 'body.maxUsers'],
    ['maxUsers above 100,000', set('maxUsers', 100_001), 'body.maxUsers'],
    ['maxUsers a fraction', set('maxUsers', 1.5), 'body.maxUsers'],
    ['maxUsers a string', set('maxUsers', '10'), 'body.maxUsers'],
  ],
};

describeValidationMatrix('Digest', requests, fieldVariants);

describe('GET /digest/unsubscribe query', () => {
  it.each([
    ['missing', ''],
    ['empty', '?token='],
    ['not a token', '?token=hello'],
    ['a user JWT', '?token=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.c2ln'],
  ])('token %s → 400 naming query.token', async (_label, query) => {
    // Act
    const response = await api(`/digest/unsubscribe${query}`);

    // Assess
    expectInvalid(response, 'query.token');
  });

  it('a token of the right shape that the service did not sign → 403 invalid_unsubscribe_link', async () => {
    // Act
    const response = await api(`/digest/unsubscribe?token=du1.cHJvamVjdA.dXNlcg.${'A'.repeat(43)}`);

    // Assess
    expect(response).toMatchObject({ status: 403, body: { error: { code: 'invalid_unsubscribe_link' } } });
  });
});
