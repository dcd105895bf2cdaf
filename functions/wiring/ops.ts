import type { Area } from './types.ts';

/** Health, the client feature flags and the API description. */
export const ops: Area = {
  id: 'Ops',
  summary: 'Health of the service, the client feature flags and the API description',
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
    {
      id: 'GetOpenApi',
      method: 'GET',
      path: '/openapi.json',
      handler: 'http/docs/get-openapi.ts',
      auth: 'none',
      // A file shipped with the function, cached by the edge: no table read, nothing to limit.
      bindings: [],
      builtFile: { kind: 'openApiDocument', file: 'openapi.json' },
      summary: "The OpenAPI 3.1 description of this API, generated from the wiring table and the routes' schemas",
    },
    {
      id: 'GetApiReference',
      method: 'GET',
      path: '/docs',
      handler: 'http/docs/get-api-reference.ts',
      auth: 'none',
      bindings: [],
      summary: 'The API reference page (Scalar) over /openapi.json',
    },
    {
      id: 'GetApiReferenceScript',
      method: 'GET',
      path: '/docs/scalar.js',
      handler: 'http/docs/get-api-reference-script.ts',
      auth: 'none',
      bindings: [],
      // The package's exports map does not list its browser build: the path is from node_modules.
      builtFile: { kind: 'packageFile', module: '@scalar/api-reference/dist/browser/standalone.js', file: 'scalar.js' },
      summary: "The API reference page's script, from the installed @scalar/api-reference (no CDN)",
    },
  ],
};
