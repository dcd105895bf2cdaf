import * as z from '#shared/schema';

const positiveInt = (fallback: number) => z._default(z.coerce.number().check(z.int(), z.positive()), fallback);

const rateLimitKey = z.enum(['user', 'room', 'tenant', 'ip']);

/**
 * Settings shared by every function, parsed once at module load so a bad value fails the cold start
 * with a message naming the variable, instead of failing requests later.
 */
const configSchema = z.object({
  /** Set on every function whose wiring-table entry touches the table. */
  TABLE_NAME: z.optional(z.string().check(z.minLength(1))),
  /** Set only on functions whose wiring-table entry has `events:send`. */
  EVENTS_QUEUE_URL: z.optional(z.url()),
  /** Set only on functions whose wiring-table entry has `realtime:send`. */
  REALTIME_QUEUE_URL: z.optional(z.url()),
  /** https callback URL of the WebSocket stage (AWS) or the local gateway base URL. */
  CONNECTIONS_ENDPOINT: z.optional(z.url()),
  /** Operator secret for `/platform/*`; those routes answer 404 while it is unset. */
  CHAT_OPERATOR_KEY: z.optional(z.string().check(z.minLength(16))),
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
  TOKEN_DEFAULT_TTL_SECONDS: positiveInt(3600),
  TOKEN_MAX_TTL_SECONDS: positiveInt(86_400),
  /** How long a function instance trusts cached project keys, rooms, memberships and block lists. */
  CACHE_TTL_MS: z._default(z.coerce.number().check(z.int(), z.nonnegative()), 5000),
  MESSAGE_MAX_LENGTH: positiveInt(4000),
  /** ARN of the webhook retry state machine; set on functions that start executions. */
  WEBHOOK_STATE_MACHINE_ARN: z.optional(z.string().check(z.minLength(1))),
  WEBHOOK_MAX_ATTEMPTS: positiveInt(5),
  /** Per-attempt timeout of a webhook POST. */
  WEBHOOK_TIMEOUT_MS: positiveInt(5000),
  /** Multiplies the retry schedule's waits (tests and local use shorten them; AWS keeps 1). */
  WEBHOOK_RETRY_TIME_SCALE: z._default(z.coerce.number().check(z.positive(), z.maximum(1)), 1),
  /**
   * Allows webhook targets on private, loopback and link-local addresses and plain http to
   * loopback. The local runtime turns it on; on AWS it stays off (SSRF guard).
   */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: z._default(z.stringbool(), false),
  /** 32 bytes as 64 hex or 43 base64 characters; when set, webhook secrets are stored AES-256-GCM encrypted. */
  WEBHOOK_SECRET_ENCRYPTION_KEY: z.optional(
    z
      .string()
      .check(
        z.refine(
          (value) =>
            /^[0-9a-fA-F]{64}$/.test(value) || (/^[A-Za-z0-9+/_-]{43}=?$/.test(value) && Buffer.from(value, 'base64').length === 32),
          'must be 32 bytes given as 64 hex characters or 43 base64 characters',
        ),
      ),
  ),
  RATE_LIMIT_WEBHOOK_VERIFY_PER_MINUTE: positiveInt(60),
  /** `client-*` frames per connection per second. */
  RATE_LIMIT_CLIENT_EVENTS_PER_SECOND: positiveInt(10),
  /** New WebSocket connections to public rooms per user per minute; unset means unlimited. */
  RATE_LIMIT_PUBLIC_WS_CONNECTIONS_PER_MINUTE: z.optional(z.coerce.number().check(z.int(), z.positive())),
  /** Rooms with more connections than this fan out through the realtime queue's parallel workers. */
  REALTIME_FANOUT_QUEUE_THRESHOLD: positiveInt(200),
  /** Connections per fan-out job (one SQS message) above the threshold. */
  REALTIME_FANOUT_BATCH_SIZE: positiveInt(100),
  /** Presence frames are broadcast while a room has at most this many connections. */
  REALTIME_PRESENCE_MAX_CONNECTIONS: positiveInt(100),
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
