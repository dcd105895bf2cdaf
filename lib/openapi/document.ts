/**
 * The OpenAPI 3.1 description of the HTTP API, generated from the wiring table (`functions/wiring/`:
 * method, path, auth, lowest role, flag, rate limit, summary, area) and the zod schemas each
 * handler module checks its requests with (`declareRouteSchemas` of `#edge/route-schemas`, which
 * `httpHandler` calls as the module loads). Nothing in it is written by hand: a route added to the
 * table is described the moment its handler exists.
 *
 * Error codes come from the catalogue (`#shared/error-codes`): those the HTTP pipeline answers on
 * every route (by the route's auth and rate limit), and the ones a route's own code can answer,
 * found as the code literals left in the route's handler bundled with tree shaking, less those of
 * the pipeline's own bundle.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { type DeclaredSchemas, declaredRouteSchemas } from '#edge/route-schemas';
import { ERROR_CODES, type ErrorCode } from '#shared/error-codes';
import * as z from '#shared/schema';
import { type AuthKind, areas, type HttpRoute } from '#wiring';
import { installAwsLambdaGlobal } from '../local/streaming.ts';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

type JsonSchema = Record<string, unknown>;
type Operation = Record<string, unknown>;

/** The pipelines a route's handler is built on: the HTTP API's, or the streaming function URL's. */
const PIPELINES = { httpApi: 'functions/edge/http.ts', functionUrl: 'functions/edge/stream.ts' } as const;

const SECURITY_SCHEMES = {
  bearerJwt: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: "A project user's token (`POST /auth/token`, `POST /auth/signin`, `POST /auth/guest`); its `roles` claim holds the role",
  },
  queryToken: {
    type: 'apiKey',
    in: 'query',
    name: 'token',
    description: 'The same JWT in the query, for streams: behind CloudFront the Authorization header carries its origin signature',
  },
  serviceApiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Service-Api-Key',
    description: "A project's API key: a service principal with admin rights, passing every role check",
  },
  operatorKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Service-Operator-Key',
    description: "The deployment's operator key (the `operator-key` secret); the route answers 404 while it is not set",
  },
} as const;

type Scheme = keyof typeof SECURITY_SCHEMES;

function securityOf(route: HttpRoute): Record<Scheme, string[]>[] {
  const one = (scheme: Scheme) => ({ [scheme]: [] }) as unknown as Record<Scheme, string[]>;
  const user = route.transport === 'functionUrl' ? [one('queryToken'), one('bearerJwt')] : [one('bearerJwt')];
  const byAuth: Record<AuthKind, Record<Scheme, string[]>[]> = {
    none: [],
    user,
    apiKey: [one('serviceApiKey')],
    operator: [one('operatorKey')],
    userOrService: [...user, one('serviceApiKey')],
  };
  return byAuth[route.auth];
}

/** The envelope of every error answer (`errorAnswer` of `#shared/errors`). */
const ERROR_SCHEMA: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', description: 'Stable, machine-readable; the table of codes is in docs/api.md' },
        traceId: {
          type: 'string',
          description:
            "On every answer of a route's function: the request's `X-Trace-Id` (echoed in the header too), to quote when asking about it",
        },
        message: { type: 'string', description: 'For people; a 5xx hides the cause behind the trace id' },
        details: { description: 'Per code: for `validation_failed`, one `{ field, message }` per offending field' },
      },
    },
  },
};

/** A zod schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect), as a client sends it (`io: 'input'`). */
function jsonSchemaOf(schema: z.ZodMiniType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'any',
  }) as JsonSchema;
  return rest;
}

function parametersOf(route: HttpRoute, schemas: DeclaredSchemas): Operation[] {
  const fromSchema = (where: 'path' | 'query', schema: z.ZodMiniType | undefined) => {
    if (!schema) return [];
    const json = jsonSchemaOf(schema);
    const properties = (json.properties ?? {}) as Record<string, JsonSchema>;
    const required = new Set((json.required ?? []) as string[]);
    if (json.type !== 'object' || !json.properties) {
      // Not a plain object (a union of shapes): one object parameter whose members are the query's fields.
      return [{ name: where, in: where, required: false, style: 'form', explode: true, schema: json }];
    }
    return Object.entries(properties).map(([name, property]) => {
      const { description, ...rest } = property;
      return { name, in: where, required: where === 'path' || required.has(name), schema: rest, ...(description ? { description } : {}) };
    });
  };
  const path = fromSchema('path', schemas.params);
  // Every placeholder of the path is a parameter, whether or not the handler checks it with a schema.
  const named = new Set(path.map((parameter) => parameter.name));
  const unchecked = [...route.path.matchAll(/\{(\w+)\+?\}/g)]
    .map((match) => match[1] as string)
    .filter((name) => !named.has(name))
    .map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
  return [...path, ...unchecked, ...fromSchema('query', schemas.query)];
}

function requestBodyOf(schemas: DeclaredSchemas): Operation | undefined {
  if (schemas.rawBody) {
    return {
      required: true,
      description:
        'The bytes as sent (a file upload, or a body whose signature is checked on its raw bytes): the handler reads them itself',
      content: { '*/*': { schema: {} } },
    };
  }
  if (!schemas.body) return undefined;
  const schema = jsonSchemaOf(schemas.body);
  return {
    required: !schemas.body.safeParse(undefined).success,
    content: {
      'application/json': { schema },
      ...(schemas.form ? { 'application/x-www-form-urlencoded': { schema } } : {}),
    },
  };
}

const codesPattern = new RegExp(`["'\`](${Object.keys(ERROR_CODES).join('|')})["'\`]`, 'g');

/**
 * The error codes each bundle can answer: every catalogue code quoted in its tree-shaken code. Packages
 * stay outside the bundles (none of them holds one of our codes), which keeps this a few seconds.
 */
async function codesInBundles(entries: Record<string, string>): Promise<Map<string, Set<ErrorCode>>> {
  const result = await build({
    absWorkingDir: repoRoot,
    entryPoints: entries,
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outdir: 'openapi-scan',
    logLevel: 'silent',
  });
  const found = new Map<string, Set<ErrorCode>>();
  for (const output of result.outputFiles) {
    const name = output.path.slice(output.path.lastIndexOf('/') + 1).replace(/\.js$/, '');
    found.set(name, new Set([...output.text.matchAll(codesPattern)].map((match) => match[1] as ErrorCode)));
  }
  return found;
}

/** The statuses the pipeline answers on a route only when its wiring says so. */
function pipelineStatusApplies(status: number, route: HttpRoute): boolean {
  if (status === 401) return route.auth !== 'none';
  if (status === 429) return route.rateLimit !== undefined;
  return true;
}

/**
 * A route's error answers by status, each a reference to a shared response: routes answering the
 * same codes with a status share one, which keeps the document a fraction of its size.
 */
function errorResponsesOf(
  route: HttpRoute,
  pipeline: ReadonlySet<ErrorCode>,
  own: ReadonlySet<ErrorCode>,
  shared: Map<string, Operation>,
): Record<string, Operation> {
  const byStatus = new Map<number, { pipeline: ErrorCode[]; own: ErrorCode[] }>();
  const add = (code: ErrorCode, from: 'pipeline' | 'own') => {
    const entry = ERROR_CODES[code];
    if ('only' in entry) return;
    const codes = byStatus.get(entry.status) ?? { pipeline: [], own: [] };
    codes[from].push(code);
    byStatus.set(entry.status, codes);
  };
  for (const code of pipeline) if (pipelineStatusApplies(ERROR_CODES[code].status, route)) add(code, 'pipeline');
  for (const code of own) if (!pipeline.has(code)) add(code, 'own');
  const responses: Record<string, Operation> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const sorted = [...codes.pipeline, ...codes.own].sort();
    const response = {
      description: sorted.map((code) => `\`${code}\`: ${ERROR_CODES[code].meaning}`).join('\n\n'),
      ...(status === 429
        ? { headers: { 'Retry-After': { description: 'Seconds until the window ends', schema: { type: 'integer' } } } }
        : {}),
      content: {
        'application/json': {
          schema: {
            allOf: [
              { $ref: '#/components/schemas/Error' },
              { type: 'object', properties: { error: { type: 'object', properties: { code: { enum: sorted } } } } },
            ],
          },
        },
      },
    };
    const base = [`Error${status}`, ...codes.own.sort()].join('_');
    let name = base;
    for (let n = 2; shared.has(name) && JSON.stringify(shared.get(name)) !== JSON.stringify(response); n++) name = `${base}_${n}`;
    shared.set(name, response);
    responses[String(status)] = { $ref: `#/components/responses/${name}` };
  }
  return responses;
}

function descriptionOf(route: HttpRoute, own: ReadonlySet<ErrorCode>): string {
  const lines: string[] = [];
  const auth: Record<AuthKind, string> = {
    none: 'none',
    user: 'a user JWT',
    apiKey: 'the project API key',
    operator: 'the operator key',
    userOrService: 'a user JWT or the project API key',
  };
  lines.push(`Auth: ${auth[route.auth]}${route.minRole ? `; lowest role \`${route.minRole}\`` : ''}.`);
  const signed = [...own].filter((code) => ERROR_CODES[code].status === 401);
  if (route.auth === 'none' && signed.length > 0) {
    lines.push(
      `The request carries its own proof (a signature or signed token), checked by the route: ${signed.map((c) => `\`${c}\``).join(', ')} (401).`,
    );
  }
  if (route.flag) lines.push(`Feature flag: \`${route.flag}\` (403 \`feature_disabled\` while it is off for the project).`);
  if (route.rateLimit) {
    const { bucket, per, setting, windowSeconds = 60, counts = 'requests' } = route.rateLimit;
    lines.push(
      `Rate limit: \`${setting}\` ${counts === 'refusals' ? 'refused requests' : 'requests'} per ${per} per ${windowSeconds} s (bucket \`${bucket}\`); past it 429 with \`Retry-After\`.`,
    );
  }
  if (route.transport === 'functionUrl') lines.push('Served by a streaming function URL (server-sent events) behind the same base URL.');
  return lines.join('\n\n');
}

export interface OpenApiOptions {
  /** `info.version`. @default the package version */
  readonly version?: string;
}

/**
 * Loads every HTTP route's handler module (never running a handler) and builds the document. The
 * handlers' settings are parsed as they load, with this process's environment.
 */
export async function generateOpenApiDocument(options: OpenApiOptions = {}): Promise<Record<string, unknown>> {
  installAwsLambdaGlobal();
  const routes = areas.flatMap((area) => (area.httpRoutes ?? []).map((route) => ({ area: area.id, route })));
  const [codes] = await Promise.all([
    codesInBundles({
      ...PIPELINES,
      ...Object.fromEntries(routes.map(({ route }) => [route.id, `functions/${route.handler}`])),
    }),
    ...routes.map(({ route }) => import(pathToFileURL(join(repoRoot, 'functions', route.handler)).href)),
  ]);

  const paths: Record<string, Record<string, Operation>> = {};
  const responses = new Map<string, Operation>();
  for (const { area, route } of routes) {
    const schemas = declaredRouteSchemas(route.id);
    if (!schemas)
      throw new Error(`${route.handler} declared no schemas for ${route.id}: build it with httpHandler, or call declareRouteSchemas`);
    const pipeline = codes.get(route.transport ?? 'httpApi') ?? new Set<ErrorCode>();
    const own = codes.get(route.id) ?? new Set<ErrorCode>();
    const parameters = parametersOf(route, schemas);
    const requestBody = requestBodyOf(schemas);
    const operation: Operation = {
      operationId: route.id,
      summary: route.summary,
      description: descriptionOf(route, own),
      tags: [area],
      security: securityOf(route),
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses: {
        '2XX': { description: 'Success. The answer bodies have no schema in this document; docs/api.md describes them' },
        ...errorResponsesOf(route, pipeline, own, responses),
      },
      ...(route.minRole ? { 'x-min-role': route.minRole } : {}),
      ...(route.flag ? { 'x-feature-flag': route.flag } : {}),
      ...(route.rateLimit ? { 'x-rate-limit': route.rateLimit } : {}),
    };
    const methods = paths[route.path] ?? {};
    methods[route.method.toLowerCase()] = operation;
    paths[route.path] = methods;
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Chat service HTTP API',
      version: options.version ?? (await packageVersion()),
      description: [
        'Generated from the wiring table and the zod schemas the routes validate requests with; never edited by hand.',
        'Errors share one envelope, `{ "error": { "code", "message" } }`, listed per route with the codes it can answer.',
        'Request parameters and bodies are described; answer bodies are not (the handlers declare no response schemas): docs/api.md describes them, with pagination, the realtime frames and the webhooks.',
      ].join('\n\n'),
    },
    // Relative: the document describes the origin it is fetched from (the CloudFront base URL, or the local runtime).
    servers: [{ url: '/' }],
    tags: areas.filter((area) => (area.httpRoutes ?? []).length > 0).map((area) => ({ name: area.id, description: area.summary })),
    paths,
    components: {
      securitySchemes: SECURITY_SCHEMES,
      schemas: { Error: ERROR_SCHEMA },
      responses: Object.fromEntries([...responses].sort(([a], [b]) => a.localeCompare(b))),
    },
  };
}

async function packageVersion(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  return (JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
}
