import type { Schemas } from '#edge/middlewares/validation';
import type * as z from '#shared/schema';

/** The schemas a route's handler module checks its requests with. */
export type DeclaredSchemas = Schemas<z.ZodMiniType, z.ZodMiniType, z.ZodMiniType>;

const declared = new Map<string, DeclaredSchemas>();

/**
 * Records the schemas a handler module checks its route with, by route id, when the module loads.
 * `httpHandler` records every route's; a handler outside it (a stream) records its own. The OpenAPI
 * document (`lib/openapi/`) imports the handler modules and reads this, so it describes the very
 * schemas requests are validated with, and a handler is never run to learn them.
 */
export function declareRouteSchemas(routeId: string, schemas: DeclaredSchemas): void {
  declared.set(routeId, schemas);
}

/** What {@link declareRouteSchemas} recorded for a route, if its handler module has been loaded. */
export function declaredRouteSchemas(routeId: string): DeclaredSchemas | undefined {
  return declared.get(routeId);
}
