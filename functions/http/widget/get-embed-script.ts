import { enforceRouteGuards } from '#domain/guards/route-guards';
import { httpHandler } from '#edge/http';
import { servedFile } from '#edge/served-file';
import { PROJECT_ID_PATTERN } from '#shared/ids';
import * as z from '#shared/schema';
import { httpRoute } from '#wiring';

const route = httpRoute('GetEmbedScript');
const bundleFile = route.browserBundle?.file ?? 'embed.js';

const query = z.object({ projectId: z.optional(z.string().check(z.regex(PROJECT_ID_PATTERN, 'must be a project id'))) });

/**
 * Five minutes: a deploy reaches every site (and the edge cache) within that, and a browser past it
 * revalidates with `If-None-Match` for a bodiless 304. Turning `embed_widget` off needs no shorter
 * age: a cached script still asks `POST /auth/guest`, which refuses, and the widget removes itself.
 */
const CACHE_CONTROL = 'public, max-age=300';

/**
 * The embed widget's script. The route's flag checks the deployment's default; `?projectId=` names
 * the project a site embeds, whose override then decides.
 */
export const handler = httpHandler('GetEmbedScript', { query }, async (request) => {
  const { projectId } = request.query;
  if (projectId !== undefined) await enforceRouteGuards({ flag: 'embed_widget' }, { projectId });
  return servedFile(bundleFile, request.headers['if-none-match'], {
    'content-type': 'text/javascript; charset=utf-8',
    'cache-control': CACHE_CONTROL,
    // Sites with `Cross-Origin-Embedder-Policy: require-corp` may load it too.
    'cross-origin-resource-policy': 'cross-origin',
    'x-content-type-options': 'nosniff',
  });
});
