import * as z from '#shared/schema';
import { isVapidSubject } from '#shared/urls';

const positiveInt = (fallback: number) => z._default(z.coerce.number().check(z.int(), z.positive()), fallback);

const rateLimitKey = z.enum(['user', 'room', 'tenant', 'ip']);

const modelName = z.string().check(z.minLength(1), z.maxLength(200));

/**
 * Settings shared by every function, parsed once at module load so a bad value fails the cold start
 * with a message naming the variable, instead of failing requests later. Resources (table, queues,
 * topics, state machines, secrets, provider URLs) are not settings: they arrive through the
 * function's bindings (`functions/shared/bindings.ts`), and secrets' values are read at run time.
 */
const configSchema = z.object({
  /** How long an instance keeps a secret's value (`functions/shared/secrets.ts`): a replaced secret takes effect within it. */
  SECRETS_CACHE_TTL_MS: z._default(z.coerce.number().check(z.int(), z.nonnegative()), 300_000),
  RATE_LIMIT_MESSAGES_PER_MINUTE: positiveInt(120),
  /** Which keys the message rate limit counts by; each key has its own budget of the same size. */
  RATE_LIMIT_MESSAGE_KEYS: z.pipe(
    z._default(z.string(), 'user'),
    z.pipe(
      z.transform((value: string) =>
        value
          .split(',')
          .map((key) => key.trim())
          .filter(Boolean),
      ),
      z.array(rateLimitKey).check(z.minLength(1)),
    ),
  ),
  /** Requests to `POST /auth/signin` per source IP per minute, whatever the project or user. */
  RATE_LIMIT_SIGNIN_PER_IP_PER_MINUTE: positiveInt(30),
  /** Failed sign-ins of one (project, user id) after which its sign-in is locked... */
  SIGNIN_LOCKOUT_THRESHOLD: positiveInt(5),
  /** ...for this long, doubled by every further failure after a lock ends... */
  SIGNIN_LOCKOUT_BASE_SECONDS: positiveInt(30),
  /** ...up to this long. */
  SIGNIN_LOCKOUT_MAX_SECONDS: positiveInt(900),
  /** Failures are forgotten this long after the last one (or after the lock it caused ends); a success forgets them at once. */
  SIGNIN_FAILURE_MEMORY_SECONDS: positiveInt(900),
  /** Requests to `POST /auth/guest` (embed widget guest sessions) per source IP per minute, whatever the project. */
  RATE_LIMIT_GUEST_SESSIONS_PER_IP_PER_MINUTE: positiveInt(20),
  /**
   * Refusals of the bridge webhooks (`/webhooks/bridge/...`, `/webhooks/matrix/...`) per minute: 404s
   * per source address, other 4xx (a bad signature, a malformed request) per address and bridge. Past
   * it the address (on that bridge, but for 404s) gets 429 until the minute ends. Genuine platform
   * events do not count.
   */
  RATE_LIMIT_BRIDGE_INBOUND_PER_IP_PER_MINUTE: positiveInt(60),
  /** How old a Slack or Discord request's signed timestamp may be (either way) before it is refused as a replay. */
  BRIDGE_SIGNATURE_MAX_AGE_SECONDS: positiveInt(300),
  /** Lifetime of a guest session's token (`POST /auth/guest`); the widget asks for a new session when it lapses. */
  GUEST_TOKEN_TTL_SECONDS: positiveInt(3600),
  TOKEN_DEFAULT_TTL_SECONDS: positiveInt(3600),
  TOKEN_MAX_TTL_SECONDS: positiveInt(86_400),
  /** How long a function instance trusts cached project keys, rooms, memberships and block lists. */
  CACHE_TTL_MS: z._default(z.coerce.number().check(z.int(), z.nonnegative()), 5000),
  MESSAGE_MAX_LENGTH: positiveInt(4000),
  /**
   * Distinct @-mentions of one message that count: each is a membership read, a `mention` event
   * (times every webhook) and a push. Later ones stay in the text and announce nothing.
   */
  MESSAGE_MAX_MENTIONS: positiveInt(20),
  /** Days an audit event is kept (DynamoDB TTL on `ttl`) before it expires (docs/audit.md). */
  AUDIT_RETENTION_DAYS: positiveInt(365),
  /**
   * Refusals of `POST /internal/marketplace/audit-result` (bad, missing or stale signatures,
   * malformed bodies) per source address per minute; past it the address gets 429 until the minute ends.
   */
  RATE_LIMIT_MARKETPLACE_REFUSALS_PER_IP_PER_MINUTE: positiveInt(30),
  /** Days a notification and an activity feed entry are kept (DynamoDB TTL) before they expire, read or not. */
  NOTIFICATION_RETENTION_DAYS: positiveInt(90),
  /** Rooms a user (not the API key) creates per minute. */
  RATE_LIMIT_ROOM_CREATION_PER_MINUTE: positiveInt(20),
  /** Push device registrations and web push subscriptions, together, per user per minute. */
  RATE_LIMIT_PUSH_REGISTRATION_PER_MINUTE: positiveInt(20),
  /** GDPR export and erasure requests per calling user per minute (both walk every area of the subject's data). */
  RATE_LIMIT_GDPR_PER_MINUTE: positiveInt(10),
  /** Message reports (`POST /messages/{messageId}/reports`) a user files per minute. */
  RATE_LIMIT_REPORTS_PER_MINUTE: positiveInt(10),
  /**
   * A GDPR export up to this many bytes of JSON is the answer's attachment itself; a larger one is
   * staged in the table and answered with short-lived download links (docs/api.md, "GDPR"). Well
   * below Lambda's 6 MB answer, which a JSON body's escaping may nearly double.
   */
  GDPR_EXPORT_INLINE_MAX_BYTES: positiveInt(2_000_000),
  /** Seconds a staged export's download links work (and its chunks are kept, plus a minute). */
  GDPR_EXPORT_LINK_TTL_SECONDS: positiveInt(900),
  WEBHOOK_MAX_ATTEMPTS: positiveInt(5),
  /** Per-attempt timeout of a webhook POST. */
  WEBHOOK_TIMEOUT_MS: positiveInt(5000),
  /** Days a project's per-minute figures (`/stats/*`) are kept before their TTL removes them. */
  STATS_RETENTION_DAYS: positiveInt(8),
  /** Availability objective of every project (share of requests that are not 5xx), 0.5 to 0.99999. */
  STATS_AVAILABILITY_OBJECTIVE: z._default(z.coerce.number().check(z.gte(0.5), z.lte(0.99999)), 0.999),
  /** Latency objective: the p95 of a project's requests stays under this many milliseconds. */
  STATS_LATENCY_OBJECTIVE_MS: positiveInt(500),
  /** The window the alert rules look at, in minutes (ending with the current minute). */
  STATS_ALERT_WINDOW_MINUTES: positiveInt(5),
  /** Error-budget burn rate (error rate ÷ (1 − availability objective)) at which the burn alert fires. */
  STATS_ALERT_BURN_RATE: z._default(z.coerce.number().check(z.positive()), 14.4),
  /** Fewest requests in the window before the burn and latency rules judge a rate (a few errors of a few requests are noise). */
  STATS_ALERT_MIN_REQUESTS: positiveInt(20),
  /** Share of push sends that fail, over the window, at which the push alert fires (with at least STATS_ALERT_MIN_EVENTS sends). */
  STATS_ALERT_PUSH_FAILURE_RATE: z._default(z.coerce.number().check(z.positive(), z.lte(1)), 0.2),
  /** Fewest push sends or AI calls in the window before their failure-rate rules judge. */
  STATS_ALERT_MIN_EVENTS: positiveInt(5),
  /** Share of AI calls that fail, over the window, at which the AI provider alert fires. */
  STATS_ALERT_AI_ERROR_RATE: z._default(z.coerce.number().check(z.positive(), z.lte(1)), 0.2),
  /** How often the local runtime hands the collected figures to the aggregator (on AWS, the log subscription's own batching). */
  STATS_LOCAL_FLUSH_MS: positiveInt(1000),
  /** Multiplies the retry schedule's waits (tests and local use shorten them; AWS keeps 1). */
  WEBHOOK_RETRY_TIME_SCALE: z._default(z.coerce.number().check(z.positive(), z.maximum(1)), 1),
  /**
   * Allows every user-supplied URL (webhook targets today, web push endpoints and the like later)
   * to reach private, loopback and link-local hosts, and webhooks plain http to loopback. The local
   * runtime turns it on; on AWS it stays off (the SSRF guard of `functions/shared/outbound-guard.ts`).
   * Provider base URLs are operator settings and never go through the guard.
   */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: z._default(z.stringbool(), false),
  /** Default timeout of an outbound call (`functions/shared/outbound.ts`): connecting and the whole answer. */
  OUTBOUND_TIMEOUT_MS: positiveInt(10_000),
  /** Default cap on an outbound answer's body; a bigger one is cut off and reported as an error. */
  OUTBOUND_MAX_RESPONSE_BYTES: positiveInt(1_048_576),
  RATE_LIMIT_WEBHOOK_VERIFY_PER_MINUTE: positiveInt(60),
  /** `client-*` frames per connection per second. */
  RATE_LIMIT_CLIENT_EVENTS_PER_SECOND: positiveInt(10),
  /** New WebSocket connections to public rooms per user per minute; unset means unlimited. */
  RATE_LIMIT_PUBLIC_WS_CONNECTIONS_PER_MINUTE: z.optional(z.coerce.number().check(z.int(), z.positive())),
  /**
   * New Pusher-protocol sockets (`/app/<key>`) per source address per minute. The app key is public
   * (it sits in every page) and the socket proves nothing until it subscribes, so the address is
   * all there is to hold.
   */
  RATE_LIMIT_PUSHER_CONNECTIONS_PER_IP_PER_MINUTE: positiveInt(120),
  /** Rooms with more connections than this fan out through the realtime queue's parallel workers. */
  REALTIME_FANOUT_QUEUE_THRESHOLD: positiveInt(200),
  /** Connections per fan-out job (one SQS message) above the threshold. */
  REALTIME_FANOUT_BATCH_SIZE: positiveInt(100),
  /** Presence frames are broadcast while a room has at most this many connections. */
  REALTIME_PRESENCE_MAX_CONNECTIONS: positiveInt(100),
  /**
   * Hot rooms (docs/architecture.md, "Hot rooms: coalesced delivery"): a room whose messages pass
   * this many per second, as the event publisher counts them off the stream, is coalesced: its
   * messages are posted by the `RoomDelivery` stream consumer, a window's worth per frame.
   */
  REALTIME_COALESCE_THRESHOLD_PER_SECOND: positiveInt(5),
  /** How long a room stays coalesced after its rate last passed the threshold (refreshed while it stays hot). */
  REALTIME_COALESCE_HOLD_SECONDS: positiveInt(60),
  /**
   * Locally, how long the `RoomDelivery` consumer holds a hot room's messages after the first one
   * arrives: the window one batch frame gathers (180 ms: at 20 msg/s about 4.6 messages a frame,
   * with p99 still under 250 ms). On AWS the window is Lambda's stream polling (about 250 ms), not
   * this setting. The `RoomDelivery` entry of the wiring table names the same default for the poller.
   */
  REALTIME_COALESCE_WINDOW_MS: positiveInt(180),
  /** Messages in the `history` frame when the client does not ask (`history=`). */
  REALTIME_HISTORY_DEFAULT: z._default(z.coerce.number().check(z.int(), z.nonnegative(), z.maximum(100)), 20),
  SSE_POLL_INTERVAL_MS: positiveInt(1000),
  SSE_HEARTBEAT_MS: positiveInt(15_000),
  /**
   * An SSE response ends after this long; EventSource and the SDK reconnect with Last-Event-ID.
   * Short because a Lambda streaming a response is not told when its client goes away: an
   * abandoned stream runs (and polls) until this ends.
   */
  SSE_MAX_DURATION_SECONDS: positiveInt(120),
  /**
   * Streams (SSE responses) one user may have open at once, and one project: every tenant's
   * streams share the streaming function's reserved concurrency, so neither may take all of it.
   */
  SSE_MAX_STREAMS_PER_USER: positiveInt(5),
  SSE_MAX_STREAMS_PER_PROJECT: positiveInt(50),
  /**
   * The VAPID `sub` claim of every web push: a contact for push services. Must begin with `mailto:`
   * or `https://` (RFC 8292); anything else stops the cold start naming this setting.
   */
  VAPID_SUBJECT: z._default(
    z.string().check(z.refine(isVapidSubject, 'must be a mailto: or https:// URL')),
    'mailto:push-operator@example.com',
  ),
  /** Model of agents and the fallback of the others (OpenAI-compatible `model`). */
  AI_MODEL: z._default(modelName, 'gpt-4o-mini'),
  /** Model of reply suggestions; unset: `AI_MODEL`. */
  AI_SUGGEST_MODEL: z.optional(modelName),
  /** Model of thread, room and handoff summaries; unset: `AI_SUGGEST_MODEL`, then `AI_MODEL`. */
  AI_SUMMARY_MODEL: z.optional(modelName),
  /**
   * Comma list of the models an agent may name: an agent's model is sent on the operator's key.
   * Unset: only the models this deployment already uses (`AI_MODEL`, `AI_SUGGEST_MODEL`, `AI_SUMMARY_MODEL`).
   */
  AI_ALLOWED_MODELS: z.optional(
    z.pipe(
      z.string(),
      z.pipe(
        z.transform((value: string) =>
          value
            .split(',')
            .map((model) => model.trim())
            .filter(Boolean),
        ),
        z.array(modelName).check(z.minLength(1)),
      ),
    ),
  ),
  /** Agents one message can wake with @mentions; further agent mentions in it are ignored. */
  AI_MAX_AGENTS_PER_MESSAGE: positiveInt(1),
  /** Agent answers per user per minute, by `POST /agents/{agentId}/invoke` and by @mentions together. */
  RATE_LIMIT_AGENT_INVOKE_PER_MINUTE: positiveInt(10),
  /** Reply suggestions per user per minute. */
  RATE_LIMIT_REPLY_SUGGESTIONS_PER_MINUTE: positiveInt(10),
  /** Per attempt; each AI call makes at most `AI_ATTEMPTS` attempts. */
  AI_TIMEOUT_MS: positiveInt(10_000),
  AI_ATTEMPTS: z._default(z.coerce.number().check(z.int(), z.positive(), z.maximum(5)), 3),
  /** Characters of conversation any prompt may carry; longer messages are cut, older ones dropped. */
  AI_PROMPT_MAX_CHARS: positiveInt(24_000),
  /** Characters of one message in a prompt. */
  AI_PROMPT_MESSAGE_MAX_CHARS: positiveInt(1_000),
  /** AI calls (summaries, suggestions, agents, room summaries) per project per calendar month (UTC); a project may have its own. */
  AI_MONTHLY_QUOTA: positiveInt(10_000),
  /** Thread summaries per user per minute. */
  RATE_LIMIT_THREAD_SUMMARY_PER_MINUTE: positiveInt(10),
  /** A room summary is queued once this many messages arrived since the last one... */
  ROOM_SUMMARY_MIN_MESSAGES: positiveInt(50),
  /** ...and at least this long after the last one. */
  ROOM_SUMMARY_MIN_INTERVAL_SECONDS: positiveInt(3600),
  /** Messages a room summary reads at most (the newest). */
  ROOM_SUMMARY_MAX_MESSAGES: positiveInt(100),
  /** The push configuration environment (`PUT /push/config`) this deployment sends with. */
  PUSH_ENVIRONMENT: z._default(z.string().check(z.regex(/^[A-Za-z0-9_.-]{1,64}$/)), 'production'),
  /**
   * Per push (web push, FCM, APNs): connecting and the whole answer. Short, because endpoints are
   * users' choice and a batch waits for its slowest push.
   */
  PUSH_TIMEOUT_MS: positiveInt(3000),
  /** Recipients of one message up to which the push dispatcher sends itself; more go out as queued batches. */
  PUSH_INLINE_RECIPIENTS: positiveInt(50),
  /** Targets per queued push batch (one SQS message, one sender invocation). */
  PUSH_BATCH_SIZE: positiveInt(50),
  /** Characters of message content in a push preview. */
  PUSH_PREVIEW_LENGTH: positiveInt(120),
  /**
   * Extra PEM certificate(s) trusted for APNs connections, beside the system's: for a local APNs
   * stand-in with a self-signed certificate. Unset on AWS.
   */
  APNS_EXTRA_CA_PEM: z.optional(z.string()),
  /**
   * The switch of the daily digest schedule (08:00 UTC): anything but `true` leaves the scheduled
   * run without work (and the rule disabled on AWS). `POST /admin/digest/run` runs whatever it says.
   */
  DAILY_DIGEST_ENABLED: z._default(z.stringbool(), false),
  /** Opens of the digest e-mail's unsubscribe link per source IP per minute. */
  RATE_LIMIT_DIGEST_UNSUBSCRIBE_PER_MINUTE: positiveInt(30),
  /**
   * The LiveKit-compatible call server clients join with a token of `POST /admin/calls/token`
   * (`wss://...`). With `CALLS_API_KEY` and the `calls-secret` secret (`CALLS_API_SECRET`) set, tokens
   * are real; without any of the three, the route answers a stub token (`stub: true`).
   */
  CALLS_SERVER_URL: z.optional(z.string().check(z.regex(/^(wss?|https?):\/\/[^/\s]+/, 'must be a ws(s):// or http(s):// URL'))),
  /** The call server's API key: the `iss` of every call token (its secret is the `calls-secret` secret). */
  CALLS_API_KEY: z.optional(z.string().check(z.regex(/^\S{1,200}$/, 'must be 1-200 characters without spaces'))),
  /** Seconds a call token admits a join for (`exp`); a client asks for a new one to rejoin later. */
  CALLS_TOKEN_TTL_SECONDS: z._default(z.coerce.number().check(z.int(), z.minimum(60), z.maximum(86_400)), 600),
  /** Call tokens a user may be issued per minute. */
  RATE_LIMIT_CALL_TOKENS_PER_MINUTE: positiveInt(10),
  /** Pusher channel auths (`POST /auth/channel`) a user may be given per minute: pusher-js asks once per subscription. */
  RATE_LIMIT_CHANNEL_AUTH_PER_MINUTE: positiveInt(120),
  /**
   * Refusals of the Pusher trigger API (`/apps/<appId>/events`, `/batch_events`) per minute: 404s
   * per source address, other 4xx (a bad signature, a malformed request) per address and app. Past
   * it the address (on that app, but for 404s) gets 429 until the minute ends. Correctly signed
   * events do not count.
   */
  RATE_LIMIT_PUSHER_API_REFUSALS_PER_IP_PER_MINUTE: positiveInt(60),
  /**
   * Where the browser bundles of the wiring table (`browserBundle` of a route: the embed widget)
   * are read from. Unset on AWS, where CDK writes them beside the handler's code; the local runtime
   * sets it to the folder it bundles them into at start.
   */
  WEB_BUNDLES_DIR: z.optional(z.string().check(z.minLength(1))),
  /** Tickets a user may open from rooms per minute. */
  RATE_LIMIT_SUPPORT_TICKETS_PER_MINUTE: positiveInt(10),
  /** Reads of `/stats/*` per user per minute: a day's series reads up to 1,440 items. */
  RATE_LIMIT_STATS_READS_PER_MINUTE: positiveInt(30),
  /**
   * Largest file `POST /upload` and `POST /messages/voice` take, in bytes. Lambda's synchronous
   * request payload is 6 MB (6,291,456 bytes) and API Gateway hands it a binary body base64-encoded
   * (4 bytes per 3): 5 MB of file would be 6.99 MB in the event, so the default is 4 MiB (5.59 MB
   * encoded), which leaves room for the event's headers and a multipart envelope.
   */
  ATTACHMENTS_MAX_BYTES: z._default(z.coerce.number().check(z.int(), z.positive(), z.maximum(4_500_000)), 4_194_304),
  /** Comma list of the content types an upload may declare (parameters such as `charset` aside). */
  ATTACHMENTS_ALLOWED_TYPES: z.pipe(
    z._default(
      z.string(),
      'image/png,image/jpeg,image/gif,image/webp,application/pdf,text/plain,text/csv,text/markdown,audio/mpeg,audio/mp4,audio/ogg,audio/webm,audio/wav',
    ),
    z.pipe(
      z.transform((value: string) =>
        value
          .split(',')
          .map((type) => type.trim().toLowerCase())
          .filter(Boolean),
      ),
      z.array(z.string().check(z.regex(/^[a-z0-9][a-z0-9.+-]*\/[a-z0-9][a-z0-9.+-]*$/))).check(z.minLength(1)),
    ),
  ),
  /** Seconds the presigned S3 URL an attachment link redirects to works. */
  ATTACHMENTS_LINK_TTL_SECONDS: z._default(z.coerce.number().check(z.int(), z.positive(), z.maximum(3600)), 300),
  /** Uploads and voice messages, together, per user per minute. */
  RATE_LIMIT_UPLOADS_PER_MINUTE: positiveInt(30),
  /** Longest voice message, measured or given (`durationMs`). */
  VOICE_MAX_DURATION_MS: positiveInt(600_000),
  /** Model of voice message transcripts (OpenAI-compatible `/audio/transcriptions`). */
  AI_TRANSCRIPTION_MODEL: z._default(modelName, 'whisper-1'),
  /** Digest subscribers read per page (one Query); each page queues its users in jobs of `DIGEST_USERS_PER_JOB`. */
  DIGEST_SUBSCRIBERS_PER_PAGE: positiveInt(500),
  /** Users per digest job (one SQS message, delivered by one worker invocation). */
  DIGEST_USERS_PER_JOB: positiveInt(25),
  /** Rooms of a user a digest reads (the first by room id); the rest are left out of that day's digest. */
  DIGEST_MAX_ROOMS: positiveInt(50),
  /** Newest messages of a room a digest reads: its count of new messages stops there ("50+"). */
  DIGEST_ROOM_MESSAGES: positiveInt(50),
});

export type Config = z.infer<typeof configSchema>;
export type RateLimitKey = z.infer<typeof rateLimitKey>;

function loadConfig(env: NodeJS.ProcessEnv): Config {
  const parsed = configSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
  throw new Error(`Invalid configuration: ${problems}`);
}

export const config: Config = loadConfig(process.env);
