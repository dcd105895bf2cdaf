/**
 * The shapes of the wiring table (`functions/wiring/`). Plain data only: the table is bundled into every
 * function, so nothing here may import CDK or domain code at run time.
 */

import type { Binding } from './bindings.ts';
import type { EventFilterAttribute, EventType } from './event-types.ts';

/** How a caller proves who it is. */
export type AuthKind =
  /** No credentials. */
  | 'none'
  /** `X-Service-Operator-Key` equal to the `operator-key` secret; the route answers 404 while that secret is not set. */
  | 'operator'
  /** `X-Service-Api-Key` of a project: a service principal with admin rights. */
  | 'apiKey'
  /** `Authorization: Bearer <JWT>` of a project user. */
  | 'user'
  /** A user JWT or a project API key (server routes). */
  | 'userOrService';

/** Project roles carried in the JWT `roles` claim, lowest first. `guest` sits below `member`. */
export const ROLES = ['guest', 'member', 'moderator', 'admin', 'owner'] as const;
export type Role = (typeof ROLES)[number];
/** The roles that may act for another subject than themselves (a token whose `sub` is not its `userId`). */
export const SUBJECT_ACTING_ROLES: readonly Role[] = ['admin', 'owner'];

/** The client feature flags of the spec; `functions/domain/flags/feature-flags.ts` holds their defaults. */
export const FEATURE_FLAGS = ['voice_messages', 'reply_suggestions', 'embed_widget', 'reconnect_backoff_fluxy'] as const;
export type FeatureFlag = (typeof FEATURE_FLAGS)[number];

/** Settings (`functions/shared/config.ts`) that hold a rate limit per window. */
export type RateLimitSetting =
  | 'RATE_LIMIT_MESSAGES_PER_MINUTE'
  | 'RATE_LIMIT_WEBHOOK_VERIFY_PER_MINUTE'
  | 'RATE_LIMIT_SIGNIN_PER_IP_PER_MINUTE'
  | 'RATE_LIMIT_GUEST_SESSIONS_PER_IP_PER_MINUTE'
  | 'RATE_LIMIT_BRIDGE_INBOUND_PER_IP_PER_MINUTE'
  | 'RATE_LIMIT_PUSHER_API_REFUSALS_PER_IP_PER_MINUTE'
  | 'RATE_LIMIT_CHANNEL_AUTH_PER_MINUTE'
  | 'RATE_LIMIT_CLIENT_EVENTS_PER_SECOND'
  | 'RATE_LIMIT_THREAD_SUMMARY_PER_MINUTE'
  | 'RATE_LIMIT_REPLY_SUGGESTIONS_PER_MINUTE'
  | 'RATE_LIMIT_AGENT_INVOKE_PER_MINUTE'
  | 'RATE_LIMIT_ROOM_CREATION_PER_MINUTE'
  | 'RATE_LIMIT_PUSH_REGISTRATION_PER_MINUTE'
  | 'RATE_LIMIT_DIGEST_UNSUBSCRIBE_PER_MINUTE'
  | 'RATE_LIMIT_GDPR_PER_MINUTE'
  | 'RATE_LIMIT_REPORTS_PER_MINUTE'
  | 'RATE_LIMIT_UPLOADS_PER_MINUTE'
  | 'RATE_LIMIT_CALL_TOKENS_PER_MINUTE'
  | 'RATE_LIMIT_SUPPORT_TICKETS_PER_MINUTE'
  | 'RATE_LIMIT_MARKETPLACE_REFUSALS_PER_IP_PER_MINUTE'
  | 'RATE_LIMIT_STATS_READS_PER_MINUTE';

/**
 * A rate limit the route (or frame) is held to, counted before its handler runs
 * (`functions/edge/http.ts`, `functions/edge/frames.ts`); over it the caller gets 429 with
 * `Retry-After` (an `error` frame with `retryAfter` on a socket).
 */
export interface RateLimit {
  /** The counter's name; routes naming the same bucket share one budget. */
  readonly bucket: string;
  /**
   * What is counted: the source IP, the calling user (a service principal, the project API key,
   * is not limited), or the WebSocket connection (frames only).
   */
  readonly per: 'ip' | 'user' | 'connection';
  /** The setting holding the limit per window. */
  readonly setting: RateLimitSetting;
  /** @default 60 */
  readonly windowSeconds?: number;
  /**
   * What spends the budget: every request (`requests`), or only the requests the route refuses
   * (`refusals`: a 404 counted per source IP, any other 4xx but 429 per source IP and path). A route that a
   * platform calls for every tenant from a few addresses (the bridge webhooks) limits who sends it
   * forged or misdirected requests without throttling the platform's genuine traffic, and costs a
   * genuine request no write: an address over the limit is refused at once by each function
   * instance that has counted it past the limit, until the window ends.
   * @default 'requests'
   */
  readonly counts?: 'requests' | 'refusals';
}

/**
 * Where an HTTP route is served on AWS. `httpApi` is the HTTP API; `functionUrl` is a Lambda function
 * URL in `RESPONSE_STREAM` mode, for routes that stream (SSE), which HTTP APIs cannot. The local
 * gateway serves both on one port.
 */
export type Transport = 'httpApi' | 'functionUrl';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface HttpRoute {
  /** Stable id; also the Lambda function's logical name. */
  readonly id: string;
  readonly method: HttpMethod;
  /** API Gateway path syntax: `/rooms/{roomId}`. */
  readonly path: string;
  /** Handler module, relative to `functions/`; it exports `handler`. */
  readonly handler: string;
  readonly auth: AuthKind;
  /** Lowest JWT role admitted. A service principal (API key) passes every role check. @default 'guest' */
  readonly minRole?: Role;
  /** The route answers 403 `feature_disabled` while this flag is off for the caller's project. */
  readonly flag?: FeatureFlag;
  readonly rateLimit?: RateLimit;
  /** What the handler may touch (`functions/wiring/bindings.ts`): each becomes one least-privilege grant and one variable. */
  readonly bindings: readonly Binding[];
  /** @default 'httpApi' */
  readonly transport?: Transport;
  /**
   * Concurrent executions reserved for (and capped at) this route's function. Streaming routes hold
   * an execution per open stream; the cap keeps a crowd of them from starving the other routes of
   * the account's concurrency. @default - unreserved (the account pool)
   */
  readonly reservedConcurrency?: 'streams';
  /**
   * Seconds the route's function may run; API Gateway's HTTP API ends every request at 30 s, so
   * routes that wait on a provider (AI) set up to 29. @default ChatFunction's (10 s)
   */
  readonly timeoutSeconds?: number;
  /** A browser script the handler serves (`readWebBundle` of `#shared/web-bundles`). */
  readonly browserBundle?: BrowserBundle;
  /** A built file the handler serves (`readWebBundle` of `#shared/web-bundles`), shipped as a browser bundle is. */
  readonly builtFile?: BuiltFile;
  /**
   * The route is a privileged action (`isPrivilegedRoute` of `functions/wiring/audit.ts`): the HTTP
   * pipeline writes one audit event for each request it answers 2xx or 403 (`docs/audit.md`).
   */
  readonly audit?: AuditEntry;
  readonly summary: string;
}

/**
 * A file built from the repository and shipped with the function that serves it, the way a
 * {@link BrowserBundle} is (CDK writes it into the function's asset at synth, the local runtime into
 * `WEB_BUNDLES_DIR` at start; nothing kept in git): `openApiDocument` is the API description
 * generated from this table and the routes' schemas (`lib/openapi/`), `packageFile` a file of an
 * installed package copied as it is.
 */
export type BuiltFile =
  | { readonly kind: 'openApiDocument'; readonly file: string }
  | { readonly kind: 'packageFile'; readonly module: string; readonly file: string };

/**
 * A request field copied into an audit event's `target`: `body.userId`, `query.userId`,
 * `response.id`. Path parameters are always copied. Only ids and small settings belong here, never
 * a secret, a token, a key or message text.
 */
export type AuditTargetField = `${'body' | 'query' | 'response'}.${string}`;

/**
 * When a route that many callers use routinely writes an event: only for the requests that grant
 * or take away a privilege. Plain data, read by the audit middleware on the validated request.
 */
export type AuditCondition =
  /** The field (a role, or a list of roles; absent reads as `member`) holds `roleAtLeast` or a higher role. */
  | { readonly field: `${'body' | 'query'}.${string}`; readonly roleAtLeast: Role }
  /** The path parameter names a user other than the caller (someone else removed, not a user leaving). */
  | { readonly field: `params.${string}`; readonly notCaller: true };

/** How an HTTP route's audit events read (`functions/edge/middlewares/audit.ts`). */
export interface AuditEntry {
  /** Stable dotted name, `<area>.<verb>`: `webhooks.register`, `keys.rotate`, `gdpr.delete`. */
  readonly action: string;
  /** Further fields of the target besides the path parameters. */
  readonly target?: readonly AuditTargetField[];
  /** The GDPR subject the caller's token acts for (`sub`) goes into the target as `subject`. */
  readonly subject?: true;
  /**
   * Only requests that meet it are audited, for a high-volume route whose routine requests grant
   * nothing (`POST /auth/token` for every login; docs/audit.md, "What is audited"). @default every request
   */
  readonly only?: AuditCondition;
}

/**
 * A `web/` entry point bundled for the browser and shipped with the function that serves it: CDK
 * bundles it at synth into the function's asset, beside the handler's code; the local runtime
 * bundles it at start into `WEB_BUNDLES_DIR`. Either way the handler reads the same bytes from a
 * file, and no bundle is kept in git.
 */
export interface BrowserBundle {
  /** The entry point, from the repository root (`web/widget/embed.ts`). */
  readonly entry: string;
  /** The file name the bundle is written as (`embed.js`). */
  readonly file: string;
}

export interface WebSocketRoute {
  readonly routeKey: '$connect' | '$disconnect' | '$default';
  readonly id: string;
  readonly handler: string;
  readonly bindings: readonly Binding[];
  readonly summary: string;
}

/** The channels of a WebSocket connection: a room's, or a user's own (`/ws/user/<userId>`). */
export type Channel = 'room' | 'user';

/**
 * A client frame type. The WebSocket API selects routes on the frame's `type`
 * (`$request.body.type`): a frame with an `answer` is answered by API Gateway itself (a MOCK route
 * with a route response), so no function runs and nothing is billed but the two messages; every
 * other type lands on `$default`, which dispatches it by `type` (`functions/ws/default.ts`, middy
 * `ws-router`'s shape).
 */
export interface FrameRoute {
  /** The frame's `type`; a trailing `*` matches every type with that prefix (`client-*`). */
  readonly type: string;
  /** The channels that accept it; others answer `unsupported_frame`. */
  readonly channels: readonly Channel[];
  readonly flag?: FeatureFlag;
  readonly rateLimit?: RateLimit;
  /** The frame API Gateway answers with, unconditionally and on every channel (no flag, no limit). */
  readonly answer?: Readonly<Record<string, string | number | boolean>>;
  readonly summary: string;
}

/** A Lambda consumer of one queue (an SQS event source on AWS, a polling loop locally). */
export interface QueueConsumer {
  readonly id: string;
  /** `id` of a shared queue (`queues`). */
  readonly queue: string;
  readonly handler: string;
  readonly batchSize: number;
  /** Concurrent batches (the event source's maximum concurrency on AWS, at least 2; pollers locally). */
  readonly maxConcurrency: number;
  /** Seconds; the queue's visibility timeout must exceed it. */
  readonly timeoutSeconds: number;
  readonly bindings: readonly Binding[];
  readonly summary: string;
}

/**
 * A subscriber of the domain events: its own queue (and dead-letter queue) subscribed to the event
 * fan-out with a filter on the event type, and a consumer function reading it in batches with
 * partial batch failures. One failing subscriber never makes another see an event twice.
 */
export interface EventSubscriber {
  /** The consumer function's id; its queue is `<id>Queue`. */
  readonly id: string;
  /** The event types delivered to its queue (an SNS filter policy on the `type` attribute). */
  readonly eventTypes: readonly EventType[] | 'all';
  /**
   * Further conditions of the filter policy, on the attributes the publisher sets
   * (`EVENT_FILTER_ATTRIBUTES` of `functions/shared/events.ts`): an event reaches the queue only when
   * each named attribute has one of the listed values. Events the subscriber would only drop then
   * cost neither a queue message nor an invocation.
   */
  readonly attributeFilter?: Readonly<Partial<Record<EventFilterAttribute, readonly string[]>>>;
  /**
   * The event types `attributeFilter` holds for; the subscriber's other types arrive on their type
   * alone (an `$or` in the filter policy). Unset: all of `eventTypes`.
   */
  readonly attributeFilterTypes?: readonly EventType[];
  /**
   * A setting the subscriber is useless without (`AI_BASE_URL`): when it is unset at synth (CDK
   * context) or at the local runtime's start, the subscriber, its queue and its function are not created.
   */
  readonly requiresSetting?: 'AI_BASE_URL';
  readonly handler: string;
  readonly batchSize: number;
  /** Concurrent batches, as for {@link QueueConsumer}. */
  readonly maxConcurrency: number;
  readonly timeoutSeconds: number;
  /** Must exceed `timeoutSeconds`. */
  readonly visibilityTimeoutSeconds: number;
  /** Receives after which an event moves to the subscriber's dead-letter queue. */
  readonly maxReceiveCount: number;
  readonly bindings: readonly Binding[];
  readonly summary: string;
}

/**
 * A consumer of the table's change stream: a DynamoDB event source with these filters on AWS,
 * `lib/local/stream-poller.ts` locally. Patterns use Lambda's event filtering syntax; a record
 * reaches the handler when any pattern matches.
 */
export interface StreamConsumer {
  readonly id: string;
  readonly handler: string;
  readonly batchSize: number;
  readonly filters: readonly Record<string, unknown>[];
  readonly timeoutSeconds: number;
  readonly bindings: readonly Binding[];
  readonly summary: string;
  /**
   * Locally, a window of `setting` ms (`defaultMs` unset) opened by a lane's first record, whose
   * records reach the handler in one invocation. On AWS, Lambda polls a shard about four times a
   * second whatever this says, and an invocation holds what one poll found.
   * @default none: records are handed over as they are read
   */
  readonly batchWindow?: { readonly setting: string; readonly defaultMs: number };
}

/** A Lambda function a state machine invokes: its ARN replaces `${placeholder}` in the ASL file. */
export interface StateMachineTask {
  readonly placeholder: string;
  readonly id: string;
  readonly handler: string;
  readonly timeoutSeconds: number;
  readonly bindings: readonly Binding[];
  readonly summary: string;
}

/** A Step Functions Standard state machine whose ASL lives in `lib/state-machines/`. */
export interface StateMachineDefinition {
  readonly id: string;
  /** Relative to the repository root; CDK and the local interpreter load this same file. */
  readonly definitionFile: string;
  readonly tasks: readonly StateMachineTask[];
  readonly summary: string;
}

/**
 * A function run on a clock: an EventBridge rule on AWS, an entry of the local runtime's scheduler
 * (`lib/local/scheduler.ts`). The schedule always exists; a `switch` setting that is not `true`
 * leaves the rule disabled on AWS and makes the function return without work everywhere.
 */
export interface ScheduleEntry {
  readonly id: string;
  /**
   * An EventBridge cron expression in UTC: `cron(minutes hours day-of-month month day-of-week year)`.
   * The local scheduler reads numbers, `*`, `?`, lists (`1,15`) and ranges (`1-5`) in the first five
   * fields; the year must be `*`.
   */
  readonly cron: string;
  /** The setting (`functions/shared/config.ts`) that must be `true` for a run to do anything. */
  readonly switch?: 'DAILY_DIGEST_ENABLED';
  readonly handler: string;
  readonly timeoutSeconds: number;
  readonly bindings: readonly Binding[];
  readonly summary: string;
}

/**
 * A consumer of the functions' structured log records: on AWS a CloudWatch Logs subscription filter
 * with `filterPattern` on the log group of every function of the table (but its own) invoking it
 * with batches of matching lines; locally the runtime's metric sink hands it the records that
 * would have matched, in the same event shape, every `STATS_LOCAL_FLUSH_MS`.
 */
export interface LogSubscriber {
  readonly id: string;
  /** A CloudWatch Logs filter pattern (JSON syntax: `{ $.figures = "v1" }`). */
  readonly filterPattern: string;
  /** The property and value of a record the pattern matches, for the local feed, which reads records rather than patterns. */
  readonly matches: { readonly key: string; readonly value: string };
  readonly handler: string;
  readonly timeoutSeconds: number;
  readonly bindings: readonly Binding[];
  readonly summary: string;
}

/** A queue shared between areas (created by the root stack). */
export interface QueueDefinition {
  readonly id: string;
  /** Seconds a received message stays invisible; must exceed the consumer's timeout. */
  readonly visibilityTimeoutSeconds: number;
  /** Receives after which a message moves to the dead-letter queue. */
  readonly maxReceiveCount: number;
  readonly summary: string;
}

/**
 * One area of the service: a file of the wiring table and, on AWS, one nested stack holding the
 * area's functions, routes, subscriber queues, state machines and alarms.
 */
export interface Area {
  /** The nested stack's id (`Rooms`), PascalCase. */
  readonly id: string;
  readonly summary: string;
  readonly httpRoutes?: readonly HttpRoute[];
  readonly webSocketRoutes?: readonly WebSocketRoute[];
  readonly frames?: readonly FrameRoute[];
  /** Queues shared with other areas; the root stack creates them. */
  readonly queues?: readonly QueueDefinition[];
  readonly queueConsumers?: readonly QueueConsumer[];
  readonly eventSubscribers?: readonly EventSubscriber[];
  readonly streamConsumers?: readonly StreamConsumer[];
  readonly stateMachines?: readonly StateMachineDefinition[];
  readonly schedules?: readonly ScheduleEntry[];
  readonly logSubscribers?: readonly LogSubscriber[];
}

/** Every Lambda function of the wiring table, whatever invokes it. */
export interface FunctionEntry {
  readonly id: string;
  readonly area: string;
  readonly kind: 'http' | 'webSocket' | 'queueConsumer' | 'eventSubscriber' | 'streamConsumer' | 'task' | 'schedule' | 'logSubscriber';
  readonly handler: string;
  readonly bindings: readonly Binding[];
  readonly timeoutSeconds?: number;
  /** Shipped beside the function's code (HTTP routes only). */
  readonly browserBundle?: BrowserBundle;
  /** Shipped beside the function's code (HTTP routes only). */
  readonly builtFile?: BuiltFile;
  readonly summary: string;
}
