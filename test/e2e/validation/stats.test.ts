import { beforeAll, describe, it } from 'vitest';
import { api, createTestProject, type TestProject } from '../../support/api';
import {
  describeValidationMatrix,
  drop,
  expectInvalid,
  type RouteRequests,
  set,
  type Variant,
} from '../../support/matrices/validation-driver';

/** Bad input to the Stats area's routes (windows, limits, objectives); the checks are the matrix's (`validation-driver.ts`). */

let project: TestProject;

beforeAll(async () => {
  project = await createTestProject('validation-stats');
});

const key = () => ({ apiKey: project.apiKey });

/** How to make a request each route of the area accepts. */
const requests: RouteRequests = {
  GetOpsStats: { path: () => '/stats/ops?minutes=5', auth: key, success: 200 },
  GetSloStats: { path: () => '/stats/slo?minutes=5', auth: key, success: 200 },
  ListStatsAlerts: { path: () => '/stats/alerts?limit=10', auth: key, success: 200 },
  GetStatsObjectives: { path: () => '/admin/stats/objectives', auth: key, success: 200 },
  PutStatsObjectives: {
    path: () => '/admin/stats/objectives',
    auth: key,
    body: () => ({ availability: 0.995, latencyP95Ms: 400 }),
    success: 200,
  },
};

const fieldVariants: Record<string, Variant[]> = {
  PutStatsObjectives: [
    ['availability missing', drop('availability'), 'body.availability'],
    ['availability below 0.9', set('availability', 0.89), 'body.availability'],
    ['availability above 0.99999', set('availability', 0.999991), 'body.availability'],
    ['availability a string', set('availability', '0.99'), 'body.availability'],
    ['latencyP95Ms missing', drop('latencyP95Ms'), 'body.latencyP95Ms'],
    ['latencyP95Ms below 50', set('latencyP95Ms', 49), 'body.latencyP95Ms'],
    ['latencyP95Ms above 10000', set('latencyP95Ms', 10_001), 'body.latencyP95Ms'],
    ['latencyP95Ms not whole', set('latencyP95Ms', 250.5), 'body.latencyP95Ms'],
  ],
};

describeValidationMatrix('Stats', requests, fieldVariants);

describe('query parameters', () => {
  it.each(['/stats/ops', '/stats/slo'])('%s?minutes= outside 1–1440 or not whole → 400 naming query.minutes', async (path) => {
    for (const minutes of ['0', '1441', '1.5', 'lots', '-3']) {
      expectInvalid(await api(`${path}?minutes=${minutes}`, key()), 'query.minutes');
    }
  });

  it.each(['0', '101', '1.5', 'lots'])('/stats/alerts?limit=%s → 400 naming query.limit', async (limit) => {
    expectInvalid(await api(`/stats/alerts?limit=${limit}`, key()), 'query.limit');
  });
});
