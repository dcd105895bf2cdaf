import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { beforeAll, describe, expect, it } from 'vitest';
import { declaredRouteSchemas } from '#edge/route-schemas';
import { ERROR_CODES, type ErrorCode } from '#shared/error-codes';
import { type HttpRoute, httpRoutes } from '#wiring';
import { generateOpenApiDocument } from '../../lib/openapi/document.ts';

interface Parameter {
  name: string;
  in: string;
  required: boolean;
}
interface Operation {
  operationId: string;
  tags: string[];
  security: Record<string, string[]>[];
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { $ref?: string }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: {
    securitySchemes: Record<string, { type: string; scheme?: string; in?: string; name?: string }>;
    responses: Record<
      string,
      {
        content: {
          'application/json': { schema: { allOf: [unknown, { properties: { error: { properties: { code: { enum: string[] } } } } }] } };
        };
      }
    >;
  };
}

let document: Document;
let generationMs = 0;

beforeAll(async () => {
  const started = performance.now();
  document = (await generateOpenApiDocument()) as unknown as Document;
  generationMs = performance.now() - started;
}, 120_000);

const operationOf = (route: HttpRoute) => document.paths[route.path]?.[route.method.toLowerCase()] as Operation;

/** The credentials an operation accepts, each as "header X" / "query X" / "bearer", from its security schemes. */
function credentialsOf(operation: Operation): string[] {
  return operation.security
    .flatMap((requirement) => Object.keys(requirement))
    .map((name) => {
      const scheme = document.components.securitySchemes[name];
      return scheme?.type === 'http' ? `${scheme.scheme}` : `${scheme?.in} ${scheme?.name?.toLowerCase()}`;
    })
    .sort();
}

/** What each auth kind accepts, as docs/api.md's "Authentication" states it. */
const EXPECTED_CREDENTIALS: Record<HttpRoute['auth'], string[]> = {
  none: [],
  user: ['bearer'],
  apiKey: ['header x-service-api-key'],
  operator: ['header x-service-operator-key'],
  userOrService: ['bearer', 'header x-service-api-key'],
};

/** The error codes an operation lists for a status, read through its shared response. */
function codesOf(operation: Operation, status: number): string[] | undefined {
  const ref = operation.responses[String(status)]?.$ref;
  if (!ref) return undefined;
  const response = document.components.responses[ref.replace('#/components/responses/', '')];
  return response?.content['application/json'].schema.allOf[1].properties.error.properties.code.enum;
}

const shapeKeys = (schema: unknown) => Object.keys((schema as { _zod: { def: { shape?: object } } } | undefined)?._zod.def.shape ?? {});

describe('the OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(document as unknown as Record<string, unknown>);

    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect((document as unknown as { openapi: string }).openapi).toBe('3.1.0');
  });

  it('describes every route of the wiring table once, and nothing else', () => {
    const described = Object.values(document.paths).flatMap((methods) => Object.values(methods).map((operation) => operation.operationId));

    expect(described.sort()).toEqual(httpRoutes.map((route) => route.id).sort());
  });

  describe.each(httpRoutes.map((route) => [route.id, route] as const))('%s', (_id, route) => {
    it('takes the credentials of its auth kind', () => {
      const accepted = credentialsOf(operationOf(route));

      if (route.transport === 'functionUrl') expect(accepted).toEqual([...EXPECTED_CREDENTIALS[route.auth], 'query token'].sort());
      else expect(accepted).toEqual(EXPECTED_CREDENTIALS[route.auth]);
    });

    it('names every path placeholder and every query field its handler checks', () => {
      const parameters = operationOf(route).parameters ?? [];
      const placeholders = [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);
      const declared = declaredRouteSchemas(route.id)?.query;
      // A query that is no fixed set of fields (a record of every parameter as signed) is one form-style object.
      const query = declared && shapeKeys(declared).length === 0 ? ['query'] : shapeKeys(declared);

      expect(parameters.filter((p) => p.in === 'path').map((p) => [p.name, p.required])).toEqual(placeholders.map((name) => [name, true]));
      expect(parameters.filter((p) => p.in === 'query').map((p) => p.name)).toEqual(query);
    });

    it('describes the body its handler checks', () => {
      const schemas = declaredRouteSchemas(route.id);
      const body = operationOf(route).requestBody;

      if (schemas?.body) expect(body?.content['application/json']?.schema).toBeTypeOf('object');
      else if (schemas?.rawBody) expect(Object.keys(body?.content ?? {})).toEqual(['*/*']);
      else expect(body).toBeUndefined();
    });

    it('lists the errors every route answers, those of its auth and limit, each with a code of its status', () => {
      const operation = operationOf(route);
      const statuses = Object.keys(operation.responses).filter((status) => status !== '2XX');

      expect(codesOf(operation, 400)).toContain('validation_failed');
      expect(codesOf(operation, 404)).toContain('not_found');
      expect(codesOf(operation, 500)).toContain('internal_error');
      if (route.transport !== 'functionUrl') expect(codesOf(operation, 413)).toContain('payload_too_large');
      if (route.auth !== 'none') expect(codesOf(operation, 401)).toContain('missing_credentials');
      if (route.minRole || route.flag) expect(codesOf(operation, 403)).toEqual(expect.arrayContaining(['forbidden', 'feature_disabled']));
      expect(codesOf(operation, 429) !== undefined).toBe(route.rateLimit !== undefined);
      for (const status of statuses) {
        for (const code of codesOf(operation, Number(status)) ?? []) expect(ERROR_CODES[code as ErrorCode]?.status).toBe(Number(status));
      }
    });
  });

  it("lists the codes a route's own code answers, found in its bundle, not those of other routes", () => {
    const byId = (id: string) => operationOf(httpRoutes.find((route) => route.id === id) as HttpRoute);

    expect(codesOf(byId('CreateRoom'), 409)).toEqual(expect.arrayContaining(['room_exists', 'dm_id_taken']));
    expect(codesOf(byId('SignIn'), 401)).toContain('invalid_credentials');
    expect(codesOf(byId('PusherTriggerEvents'), 401)).toContain('invalid_pusher_signature');
    expect(codesOf(byId('GetHealth'), 409)).toBeUndefined();
    expect(codesOf(byId('ListRooms'), 404)).not.toContain('room_not_found');
  });

  it('tags each operation with its area', () => {
    const tags = new Set(Object.values(document.paths).flatMap((methods) => Object.values(methods).flatMap((operation) => operation.tags)));

    expect(operationOf(httpRoutes.find((route) => route.id === 'GetOpenApi') as HttpRoute).tags).toEqual(['Ops']);
    expect(tags.size).toBeGreaterThan(10);
  });

  it('stays small and quick to generate', () => {
    const bytes = Buffer.byteLength(JSON.stringify(document));
    console.info(`OpenAPI document: ${httpRoutes.length} routes, ${bytes} bytes, generated in ${Math.round(generationMs)} ms`);

    expect(bytes).toBeLessThan(1_000_000);
  });
});

describe('npm run -s docs:openapi', () => {
  it("prints the whole document through a pipe, not the pipe buffer's first 64 KB", async () => {
    const { execFile } = await import('node:child_process');
    const text = await new Promise<string>((resolve, reject) =>
      execFile('node_modules/.bin/tsx', ['lib/openapi/write-document.ts'], { maxBuffer: 64 * 1024 * 1024 }, (error, stdout) =>
        error ? reject(error) : resolve(stdout),
      ),
    );

    expect(text.length).toBeGreaterThan(150_000);
    expect(Object.keys(JSON.parse(text).paths).length).toBeGreaterThan(100);
  }, 60_000);
});

describe("the API reference page's script", () => {
  it("fits Lambda's 6 MB answer as a JSON string, with room to grow", () => {
    const script = readFileSync(new URL('../../node_modules/@scalar/api-reference/dist/browser/standalone.js', import.meta.url), 'utf8');

    expect(Buffer.byteLength(JSON.stringify({ statusCode: 200, body: script }))).toBeLessThan(5_000_000);
  });
});
