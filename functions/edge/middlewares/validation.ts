import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { readFormOrJsonBody, readJsonBody } from '#edge/middlewares/json-body';
import { BadRequestError } from '#shared/errors';
import type * as z from '#shared/schema';

type Issue = z.core.$ZodIssue;

/**
 * One entry per offending field. For a union (a body of one shape or another) the shape the input
 * came closest to, the one with strictly the fewest issues, speaks, so the details still name
 * fields; when no shape is closest (none or both given) the union itself is the issue.
 */
function fieldIssues(issues: readonly Issue[], prefix: readonly PropertyKey[]): { path: PropertyKey[]; message: string }[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    if (issue.code === 'invalid_union') {
      const fewest = Math.min(...issue.errors.map((branch) => branch.length));
      const closest = issue.errors.filter((branch) => branch.length === fewest);
      if (closest.length === 1 && closest[0]) return fieldIssues(closest[0], path);
    }
    return [{ path, message: issue.message }];
  });
}

function issuesOf(error: z.core.$ZodError, where: string) {
  return fieldIssues(error.issues, []).map((issue) => ({ field: [where, ...issue.path.map(String)].join('.'), message: issue.message }));
}

/** Validates one part of a request (`body`, `query`, `path`, ...): a 400 naming each bad field otherwise. Also for handlers outside `httpHandler`. */
export function parsePart<S extends z.ZodMiniType>(schema: S | undefined, value: unknown, where: string): z.infer<S> {
  if (!schema) return undefined as z.infer<S>;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const details = issuesOf(parsed.error, where);
  throw new BadRequestError(`Invalid request: ${details.map((d) => `${d.field}: ${d.message}`).join('; ')}`, details);
}

export interface Schemas<B extends z.ZodMiniType, Q extends z.ZodMiniType, P extends z.ZodMiniType> {
  readonly body?: B;
  /** The body is bytes (a file upload), not JSON: it is left unread here, for the handler's `rawBody`. */
  readonly rawBody?: true;
  /** The body may also be form-encoded (`application/x-www-form-urlencoded`), as Pusher clients post theirs. */
  readonly form?: true;
  readonly query?: Q;
  readonly params?: P;
}

/** What the `validation` middleware puts on the context: each part as its schema parsed it. */
export interface ValidatedContext<B, Q, P> extends Context {
  input: { readonly body: B; readonly query: Q; readonly params: P };
}

/**
 * Checks the path, the query and the JSON body against the route's zod schemas, in that order, and
 * puts what they parsed on `context.input`. A failure is a 400 `validation_failed` whose details
 * name each bad field (`body.content`), where middy's stock `validator` (JSON Schema through ajv)
 * would need the schemas twice. The body is read even on a route without a body schema, so a
 * malformed or oversized one is refused the same everywhere.
 */
export function validation<B extends z.ZodMiniType, Q extends z.ZodMiniType, P extends z.ZodMiniType>(
  schemas: Schemas<B, Q, P>,
): MiddlewareObj<APIGatewayProxyEventV2, unknown, Error, ValidatedContext<z.infer<B>, z.infer<Q>, z.infer<P>>> {
  return {
    before: ({ event, context }) => {
      const params = parsePart(schemas.params, event.pathParameters ?? {}, 'path');
      const query = parsePart(schemas.query, event.queryStringParameters ?? {}, 'query');
      const read = schemas.form ? readFormOrJsonBody : readJsonBody;
      const body = (schemas.rawBody ? undefined : parsePart(schemas.body, read(event), 'body')) as z.infer<B>;
      context.input = { params, query, body };
    },
  };
}
