/**
 * THE wiring table. Every HTTP route, WebSocket route and frame type, queue, queue consumer, event
 * subscriber, stream consumer, state machine and schedule of the service is listed once, in the file of its
 * area. The CDK app builds one nested stack per area from it (`lib/stacks/`), the local gateway
 * and stand-ins route from it (`lib/local/`), and handlers read their own auth, flag and rate limit
 * from it (`functions/edge/http.ts`), so nothing can drift between the two worlds.
 *
 * Plain data only: this module is bundled into every function, so it must not import CDK or domain code.
 */

import { ai } from './ai.ts';
import { attachments } from './attachments.ts';
import { audit } from './audit.ts';
import { auth } from './auth.ts';
import type { Binding } from './bindings.ts';
import { bridges } from './bridges.ts';
import { calls } from './calls.ts';
import { digest } from './digest.ts';
import { events } from './events.ts';
import { messages } from './messages.ts';
import { notifications } from './notifications.ts';
import { ops } from './ops.ts';
import { privacy } from './privacy.ts';
import { push } from './push.ts';
import { pusher } from './pusher.ts';
import { realtime } from './realtime.ts';
import { rooms } from './rooms.ts';
import { stats } from './stats.ts';
import { support } from './support.ts';
import type {
  Area,
  EventSubscriber,
  FrameRoute,
  FunctionEntry,
  HttpRoute,
  LogSubscriber,
  QueueConsumer,
  QueueDefinition,
  ScheduleEntry,
  StateMachineDefinition,
  StreamConsumer,
  WebSocketRoute,
} from './types.ts';
import { webhooks } from './webhooks.ts';
import { widget } from './widget.ts';

export * from './types.ts';

/** Every area; each becomes a nested stack that depends on the root stack only, never on another area. */
export const areas: readonly Area[] = [
  ops,
  auth,
  rooms,
  messages,
  realtime,
  webhooks,
  push,
  ai,
  notifications,
  events,
  digest,
  privacy,
  attachments,
  support,
  calls,
  widget,
  bridges,
  pusher,
  audit,
  stats,
];

export const httpRoutes: readonly HttpRoute[] = areas.flatMap((area) => area.httpRoutes ?? []);
export const webSocketRoutes: readonly WebSocketRoute[] = areas.flatMap((area) => area.webSocketRoutes ?? []);
export const webSocketFrames: readonly FrameRoute[] = areas.flatMap((area) => area.frames ?? []);
export const queues: readonly QueueDefinition[] = areas.flatMap((area) => area.queues ?? []);
export const queueConsumers: readonly QueueConsumer[] = areas.flatMap((area) => area.queueConsumers ?? []);
export const eventSubscribers: readonly EventSubscriber[] = areas.flatMap((area) => area.eventSubscribers ?? []);
export const streamConsumers: readonly StreamConsumer[] = areas.flatMap((area) => area.streamConsumers ?? []);
export const stateMachines: readonly StateMachineDefinition[] = areas.flatMap((area) => area.stateMachines ?? []);
export const schedules: readonly ScheduleEntry[] = areas.flatMap((area) => area.schedules ?? []);
export const logSubscribers: readonly LogSubscriber[] = areas.flatMap((area) => area.logSubscribers ?? []);

/**
 * A route's bindings with those its auth implies: verifying a user JWT opens the project's signing
 * secret, sealed under the `signing-key` secret. Functions that open it otherwise (sign tokens, an
 * optional token, the WebSocket handshake) list the binding themselves. An audited route writes its
 * audit event to the table.
 */
export function withAuthBindings(route: Pick<HttpRoute, 'auth' | 'bindings' | 'audit'>): readonly Binding[] {
  const implied: Binding[] = route.auth === 'user' || route.auth === 'userOrService' ? ['secret:signing-key'] : [];
  // The audit middleware writes the route's audit event (functions/edge/middlewares/audit.ts).
  if (route.audit) implied.push('table:read', 'table:write');
  return [...new Set([...route.bindings, ...implied])];
}

/**
 * The binding of the functions CloudFront reaches with its origin header (`x-origin-verify`, the
 * `origin-verify` secret's value): every route of the HTTP API and the WebSocket `$connect`.
 * The SSE function URL is closed by Origin Access Control instead, and `$default` and `$disconnect`
 * run only for a connection `$connect` let in.
 */
export const ORIGIN_VERIFY_BINDING: Binding = 'secret:origin-verify';

/** The header CloudFront adds to every request it sends the HTTP and WebSocket APIs, holding that secret's value. */
export const ORIGIN_VERIFY_HEADER = 'x-origin-verify';

/** Whether CloudFront stands in front of this route with its origin header (see {@link ORIGIN_VERIFY_BINDING}). */
export function behindOriginHeader(route: Pick<HttpRoute, 'transport'> | Pick<WebSocketRoute, 'routeKey'>): boolean {
  return 'routeKey' in route ? route.routeKey === '$connect' : (route.transport ?? 'httpApi') === 'httpApi';
}

/** A route's bindings with the origin secret where CloudFront's header reaches it. */
function withOriginBinding(route: Parameters<typeof behindOriginHeader>[0], bindings: readonly Binding[]): readonly Binding[] {
  return behindOriginHeader(route) ? [...new Set([...bindings, ORIGIN_VERIFY_BINDING])] : bindings;
}

/** Every function of an area, whatever invokes it. */
export function functionsOf(area: Area): FunctionEntry[] {
  const entry = (kind: FunctionEntry['kind'], fn: Omit<FunctionEntry, 'kind' | 'area'>): FunctionEntry => ({
    kind,
    area: area.id,
    id: fn.id,
    handler: fn.handler,
    bindings: fn.bindings,
    timeoutSeconds: fn.timeoutSeconds,
    ...(fn.browserBundle ? { browserBundle: fn.browserBundle } : {}),
    ...(fn.builtFile ? { builtFile: fn.builtFile } : {}),
    summary: fn.summary,
  });
  return [
    ...(area.httpRoutes ?? []).map((route) => entry('http', { ...route, bindings: withOriginBinding(route, withAuthBindings(route)) })),
    ...(area.webSocketRoutes ?? []).map((route) => entry('webSocket', { ...route, bindings: withOriginBinding(route, route.bindings) })),
    ...(area.queueConsumers ?? []).map((consumer) => entry('queueConsumer', consumer)),
    ...(area.eventSubscribers ?? []).map((subscriber) => entry('eventSubscriber', subscriber)),
    ...(area.streamConsumers ?? []).map((consumer) => entry('streamConsumer', consumer)),
    ...(area.stateMachines ?? []).flatMap((machine) => machine.tasks.map((task) => entry('task', task))),
    ...(area.schedules ?? []).map((schedule) => entry('schedule', schedule)),
    ...(area.logSubscribers ?? []).map((subscriber) => entry('logSubscriber', subscriber)),
  ];
}

/** Every function of the wiring table. */
export const functionEntries: readonly FunctionEntry[] = areas.flatMap(functionsOf);

/** The route whose id is given; throws at cold start for a typo rather than at request time. */
export function httpRoute(id: string): HttpRoute {
  const route = httpRoutes.find((candidate) => candidate.id === id);
  if (!route) throw new Error(`No HTTP route with id ${id} in functions/wiring/`);
  return route;
}

/** The frame field the WebSocket API selects routes on (`$request.body.type`). */
export const ROUTE_SELECTION_FIELD = 'type';

/** Frames API Gateway answers itself (MOCK routes), by type: the function never sees them. */
export const gatewayAnswers: ReadonlyMap<string, Readonly<Record<string, unknown>>> = new Map(
  webSocketFrames.flatMap((frame) => {
    if (!frame.answer) return [];
    if (frame.type.endsWith('*') || frame.flag || frame.rateLimit) {
      throw new Error(`Frame ${frame.type} is answered by API Gateway, which matches exact types only and checks no flag or limit`);
    }
    return [[frame.type, frame.answer] as const];
  }),
);

/** The frame route a frame type falls under (`client-typing` → `client-*`), if any. */
export function frameRoute(type: string): FrameRoute | undefined {
  return webSocketFrames.find((frame) => (frame.type.endsWith('*') ? type.startsWith(frame.type.slice(0, -1)) : frame.type === type));
}
