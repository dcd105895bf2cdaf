import { beforeAll } from 'vitest';
import { createTestProject, type TestProject } from '../../support/api';
import { describeValidationMatrix, drop, type RouteRequests, set, type Variant } from '../../support/matrices/validation-driver';

/** Bad input to the Ops area's routes (health, feature flags, the API description); the checks are the matrix's (`validation-driver.ts`). */

let project: TestProject;

beforeAll(async () => {
  project = await createTestProject('validation-ops');
});

/** How to make a request each route of the area accepts. */
const requests: RouteRequests = {
  GetHealth: { path: () => '/health', auth: () => ({}), success: 200 },
  GetFeatureFlags: { path: () => '/client/feature-flags', auth: () => ({}), success: 200 },
  GetProjectFeatureFlags: { path: () => '/admin/feature-flags', auth: () => ({ apiKey: project.apiKey }), success: 200 },
  SetProjectFeatureFlags: {
    path: () => '/admin/feature-flags',
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ overrides: { voice_messages: true, reply_suggestions: true, embed_widget: true, reconnect_backoff_fluxy: false } }),
    success: 200,
  },
  GetOpenApi: { path: () => '/openapi.json', auth: () => ({}), success: 200 },
  GetApiReference: { path: () => '/docs', auth: () => ({}), success: 200 },
  GetApiReferenceScript: { path: () => '/docs/scalar.js', auth: () => ({}), success: 200 },
};

const fieldVariants: Record<string, Variant[]> = {
  SetProjectFeatureFlags: [
    ['overrides missing', drop('overrides'), 'body.overrides'],
    ['overrides an array', set('overrides', []), 'body.overrides'],
    ['overrides null', set('overrides', null), 'body.overrides'],
    ['overrides with an unknown flag', set('overrides', { dark_mode: true }), 'body.overrides'],
    ['overrides with a string value', set('overrides', { voice_messages: 'yes' }), 'body.overrides.voice_messages'],
    ['overrides with a null value', set('overrides', { embed_widget: null }), 'body.overrides.embed_widget'],
  ],
};

describeValidationMatrix('Ops', requests, fieldVariants);
