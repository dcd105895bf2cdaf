import { type HttpRoute, httpRoutes } from '#wiring';

interface CompiledRoute {
  readonly route: HttpRoute;
  readonly pattern: RegExp;
  readonly paramNames: readonly string[];
  /** Literal segments count: API Gateway prefers the most specific match. */
  readonly specificity: number;
}

function compile(route: HttpRoute): CompiledRoute {
  const paramNames: string[] = [];
  const segments = route.path.split('/').map((segment) => {
    const param = /^\{(\w+)\}$/.exec(segment);
    if (!param?.[1]) return segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&');
    paramNames.push(param[1]);
    return '([^/]+)';
  });
  return {
    route,
    pattern: new RegExp(`^${segments.join('/')}$`),
    paramNames,
    specificity: route.path.split('/').filter((s) => !s.startsWith('{')).length,
  };
}

const compiledRoutes = httpRoutes.map(compile).sort((a, b) => b.specificity - a.specificity);

/** Path parameters percent-decoded, or `undefined` when an escape is malformed (API Gateway answers 400). */
export function decodePathParameters(names: readonly string[], values: RegExpExecArray): Record<string, string> | undefined {
  try {
    return Object.fromEntries(names.map((name, index) => [name, decodeURIComponent(values[index + 1] ?? '')]));
  } catch {
    return undefined;
  }
}

export type RouteMatch =
  | { readonly route: HttpRoute; readonly paramNames: readonly string[]; readonly values: RegExpExecArray }
  /** 404 when no route has the path, 405 when routes have it but not for this method. */
  | { readonly missing: 404 | 405 };

/** The wiring table's route for a request, most specific path first, as API Gateway selects it. */
export function matchHttpRoute(method: string, pathname: string): RouteMatch {
  let pathMatched = false;
  for (const { route, pattern, paramNames } of compiledRoutes) {
    const values = pattern.exec(pathname);
    if (!values) continue;
    pathMatched = true;
    if (route.method === method) return { route, paramNames, values };
  }
  return { missing: pathMatched ? 405 : 404 };
}
