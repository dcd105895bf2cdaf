import type { Area } from './types.ts';

/** Health and the client feature flags. */
export const ops: Area = {
  id: 'Ops',
  summary: 'Health of the service and the client feature flags',
  httpRoutes: [
    {
      id: 'GetHealth',
      method: 'GET',
      path: '/health',
      handler: 'http/health/get-health.ts',
      auth: 'none',
      // Public: a probe may read one item and nothing else.
      bindings: ['table:read'],
      summary: 'State of the service and its dependencies',
    },
    {
      id: 'GetFeatureFlags',
      method: 'GET',
      path: '/client/feature-flags',
      handler: 'http/flags/get-feature-flags.ts',
      auth: 'none',
      // The token is optional, but verified when given.
      bindings: ['table:read', 'secret:signing-key'],
      summary: "Client feature flags; a bearer token targets its project's overrides",
    },
    {
      id: 'GetProjectFeatureFlags',
      method: 'GET',
      path: '/admin/feature-flags',
      handler: 'http/flags/get-project-feature-flags.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read'],
      summary: "The project's feature flag overrides",
    },
    {
      id: 'SetProjectFeatureFlags',
      method: 'PUT',
      path: '/admin/feature-flags',
      handler: 'http/flags/set-project-feature-flags.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read', 'table:write'],
      audit: { action: 'flags.set' },
      summary: "Replace the project's feature flag overrides",
    },
  ],
};
