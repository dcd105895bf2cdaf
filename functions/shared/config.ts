import * as z from '#shared/schema';

const positiveInt = (fallback: number) => z._default(z.coerce.number().check(z.int(), z.positive()), fallback);

const rateLimitKey = z.enum(['user', 'room', 'tenant', 'ip']);

/**
 * Settings shared by every function, parsed once at module load so a bad value fails the cold start
 * with a message naming the variable, instead of failing requests later.
 */
const configSchema = z.object({
  TABLE_NAME: z.string().check(z.minLength(1)),
  /** Set only on functions whose wiring-table entry has `events:send`. */
  EVENTS_QUEUE_URL: z.optional(z.url()),
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
