import { describe, expect, it } from 'vitest';
import { api } from '../../support/api';
import { describeValidationMatrix, expectInvalid, type RouteRequests, type Variant } from '../../support/matrices/validation-driver';

/** Bad input to the Widget area's routes; the checks are the matrix's (`validation-driver.ts`). */

/** How to make a request each route of the area accepts. */
const requests: RouteRequests = {
  GetEmbedScript: { path: () => '/embed.js', auth: () => ({}), success: 200 },
};

const fieldVariants: Record<string, Variant[]> = {};

describeValidationMatrix('Widget', requests, fieldVariants);

describe('query parameters', () => {
  it.each(['', 'a b', 'x'.repeat(129), 'semi;colon'])('GET /embed.js?projectId=%s → 400 naming query.projectId', async (projectId) => {
    // Act
    const response = await api(`/embed.js?projectId=${encodeURIComponent(projectId)}`);

    // Assess
    expectInvalid(response, 'query.projectId');
  });

  it('serves a well-formed project id it does not know under the deployment default (the script names no project)', async () => {
    // Act
    const response = await api('/embed.js?projectId=prj_unknown');

    // Assess
    expect(response.status).toBe(200);
  });
});
