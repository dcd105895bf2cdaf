import { RemovalPolicy } from 'aws-cdk-lib';
import type { Node } from 'constructs';
import { outboundHosts, type SecretId, secretDefinitions } from '#wiring/bindings';
import { isVapidSubject } from '../../functions/shared/urls.ts';
import { secretOutputId } from '../constructs/chat-secrets.ts';
import { DEFAULT_CORS_ALLOW_ORIGINS } from '../cors.ts';

/** Settings of one deployment of the service; every field has a default. */
export interface ChatConfig {
  /**
   * Deployment stage; part of the stack name (`Chat-<stage>`) and of resource names.
   * @default 'dev'
   */
  readonly stage: string;
  /**
   * `RATE_LIMIT_MESSAGES_PER_MINUTE` for every function.
   * @default 120
   */
  readonly rateLimitMessagesPerMinute: number;
  /** `VAPID_SUBJECT` for every function: the contact push services see in each web push. */
  readonly vapidSubject: string;
  /** `PUSH_ENVIRONMENT`: which push configuration (`PUT /push/config`) the deployment sends with. */
  readonly pushEnvironment: string;
  /** `AI_MODEL`, `AI_SUGGEST_MODEL`, `AI_SUMMARY_MODEL` as set (context keys of the same names); unset ones keep the functions' defaults. */
  readonly aiModels: Readonly<Record<string, string>>;
  /**
   * Concurrent executions reserved for, and capping, each streaming route (SSE). Every open stream
   * holds an execution for up to `SSE_MAX_DURATION_SECONDS`; the cap keeps a crowd of streams from
   * taking the concurrency `$default` and `POST /messages` need. Off by default: a reservation comes
   * out of the account's pool, which Lambda keeps at least 100 unreserved, so an account whose quota
   * is under 100 plus every reservation fails the deploy (new accounts start at 10 to 50).
   * At least {@link MINIMUM_RESERVED_CONCURRENCY} when set.
   * @default - none: the streams share the account pool, held back by the per-user stream cap
   */
  readonly streamReservedConcurrency?: number;
  /**
   * Concurrent executions reserved for, and capping, each HTTP route that calls the AI model
   * (bound to `outbound:ai`). Off by default for the same reason as `streamReservedConcurrency`;
   * the routes are bounded by their stage throttle ({@link ChatConfig.aiThrottleRateLimit}) either way.
   * At least {@link MINIMUM_RESERVED_CONCURRENCY} when set.
   * @default - none
   */
  readonly aiReservedConcurrency?: number;
  /**
   * Steady-state requests per second of each HTTP route that calls the AI model (a route setting of
   * the HTTP stage). With a route's 29 s timeout it bounds the route's concurrency at about
   * rate × seconds per call + burst, without reserving any of the account's pool.
   * @default 2
   */
  readonly aiThrottleRateLimit: number;
  /**
   * Burst requests of each HTTP route that calls the AI model.
   * @default 5
   */
  readonly aiThrottleBurstLimit: number;
  /**
   * Provider base URLs (`FCM_BASE_URL`, `AI_BASE_URL`, ... of `outboundHosts` in `functions/wiring/bindings.ts`),
   * for functions bound to them; unset ones keep the real hosts.
   * @default {}
   */
  readonly providerUrls: Readonly<Record<string, string>>;
  /**
   * The attachments bucket exists and `POST /upload`, `GET /attachments/...` and `POST /messages/voice`
   * are bound to it; `false` leaves it out and those routes answer 503 `attachments_not_configured`.
   * @default true
   */
  readonly attachmentsEnabled: boolean;
  /**
   * `DAILY_DIGEST_ENABLED`: the daily digest's EventBridge rule is enabled, and its function runs.
   * @default false
   */
  readonly dailyDigestEnabled: boolean;
  /**
   * `DIGEST_EMAIL_FROM`: the sender address of digest e-mails, an SES identity verified in the
   * deployment's region (or an address of a verified domain). Unset: no e-mail channel, no SES grant.
   * @default - none
   */
  readonly digestEmailFrom?: string;
  /**
   * The SES identity the sender is verified as, when it is not the address itself (its domain, say
   * `example.com`): the digest worker may send from this identity only.
   * @default - `digestEmailFrom`
   */
  readonly digestEmailIdentity?: string;
  /**
   * `CALLS_SERVER_URL`: the LiveKit-compatible call server clients join (`wss://...`). With
   * `callsApiKey` and the `calls-secret` secret put, `POST /admin/calls/token` answers real tokens;
   * without, stubs.
   * @default - none
   */
  readonly callsServerUrl?: string;
  /**
   * `CALLS_API_KEY`: the call server's API key, the `iss` of call tokens (its secret is the
   * `calls-secret` secret, never configuration).
   * @default - none
   */
  readonly callsApiKey?: string;
  /**
   * `LOG_LEVEL` for every function (Powertools Logger).
   * @default 'INFO'
   */
  readonly logLevel: string;
  /**
   * Origins allowed by the HTTP API's CORS preflight.
   * @default ['*']
   */
  readonly corsAllowOrigins: readonly string[];
  /**
   * Steady-state requests per second per route, for the HTTP API and the WebSocket stage.
   * @default 500
   */
  readonly throttleRateLimit: number;
  /**
   * Burst requests per route, for the HTTP API and the WebSocket stage.
   * @default 1000
   */
  readonly throttleBurstLimit: number;
  /**
   * Turns on access logs for the WebSocket stage. Unlike HTTP APIs, WebSocket access logs need the
   * account-level API Gateway CloudWatch role (`apigateway:UpdateAccount`), which this app does not own.
   * @default false
   */
  readonly webSocketAccessLogs: boolean;
  /**
   * E-mail address subscribed to the alarm topic.
   * @default - no subscription
   */
  readonly alarmEmail?: string;
  /**
   * HTTP API 5xx responses, in percent of requests, above which the 5xx alarm fires.
   * @default 5
   */
  readonly http5xxAlarmPercent: number;
  /**
   * HTTP API p99 latency, in milliseconds, above which the latency alarm fires. The AI routes may
   * take up to 29 s, so the default leaves them room.
   * @default 5000
   */
  readonly httpLatencyP99AlarmMs: number;
  /**
   * `ClaimedAccountConcurrency` (the account's Lambda concurrency in use or reserved) at which the
   * account concurrency alarm fires: set it to about 80 % of the account's quota.
   * @default 800 (80 % of the default quota of 1,000)
   */
  readonly accountConcurrencyAlarmThreshold: number;
  /**
   * What happens to log groups and the KMS keys when they are removed from the stack. The table and
   * the webhook key are always retained. "Retain" is always `RETAIN_ON_UPDATE_OR_DELETE`: a first
   * deploy that rolls back deletes what it created instead of leaving it behind, billed.
   * @default RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE for the stage 'prod', RemovalPolicy.DESTROY otherwise
   */
  readonly removalPolicy: RemovalPolicy;
  /**
   * DynamoDB deletion protection on the table. The table is retained on stack deletion either way;
   * with protection on, a first deploy that rolls back cannot delete the table it created and its
   * rollback stops there (ROLLBACK_FAILED) until the table is deleted by hand.
   * @default true for the stage 'prod', false otherwise
   */
  readonly tableDeletionProtection: boolean;
  /**
   * CloudFront in front of everything (`lib/constructs/chat-edge.ts`): one base URL with the spec's
   * paths, the APIs closed to requests that went around it. `false` keeps the three raw addresses
   * (HTTP API, WebSocket API with `?roomId=`, the stream's function URL) for teams that front the
   * service themselves.
   * @default true
   */
  readonly edge: boolean;
  /**
   * The distribution's own domain (`chat.example.com`); needs `certificateArn`.
   * @default - the distribution's *.cloudfront.net domain
   */
  readonly domainName?: string;
  /**
   * An ACM certificate for `domainName`, in us-east-1 (CloudFront reads certificates only there).
   * @default - none
   */
  readonly certificateArn?: string;
  /**
   * A Route 53 hosted zone holding `domainName`: the stack adds the A and AAAA alias records.
   * @default - no records: point the domain at the `DistributionDomainName` output yourself
   */
  readonly hostedZoneId?: string;
  /**
   * Creates a CloudFront web ACL (us-east-1 stacks only) with a per-IP rate rule on sign-in, token,
   * webhook verification and stream paths.
   * @default false
   */
  readonly waf: boolean;
  /**
   * Requests per viewer IP per 5 minutes on those paths before the web ACL blocks (WAF's minimum is 10).
   * @default 300
   */
  readonly wafRateLimit: number;
  /**
   * A web ACL of your own (created in us-east-1, scope CLOUDFRONT) to attach instead of `waf`.
   * @default - none
   */
  readonly webAclArn?: string;
  /**
   * Target account.
   * @default - environment-agnostic (`CDK_DEFAULT_ACCOUNT` is not read, so synth needs no credentials)
   */
  readonly account?: string;
  /**
   * Target region.
   * @default - environment-agnostic
   */
  readonly region?: string;
}

/**
 * The smallest reservation `streamReservedConcurrency` and `aiReservedConcurrency` accept: below it a
 * handful of clients would hold every slot (an SSE stream keeps its execution for minutes).
 */
export const MINIMUM_RESERVED_CONCURRENCY = 5;

/** Lambda keeps this much of an account's concurrency unreserved; reservations must leave it. */
export const LAMBDA_UNRESERVED_MINIMUM = 100;

/** The model settings a deployment may choose (CDK context keys of the same names). */
export const AI_MODEL_SETTINGS = ['AI_MODEL', 'AI_SUGGEST_MODEL', 'AI_SUMMARY_MODEL'] as const;

/** The defaults of {@link ChatConfig}, merged under `overrides`; validates what handlers would reject at cold start. */
export function resolveChatConfig(overrides: Partial<ChatConfig> = {}): ChatConfig {
  const stage = overrides.stage ?? 'dev';
  const config: ChatConfig = {
    stage,
    rateLimitMessagesPerMinute: 120,
    vapidSubject: 'mailto:push-operator@example.com',
    pushEnvironment: 'production',
    aiModels: {},
    aiThrottleRateLimit: 2,
    aiThrottleBurstLimit: 5,
    providerUrls: {},
    dailyDigestEnabled: false,
    attachmentsEnabled: true,
    logLevel: 'INFO',
    corsAllowOrigins: DEFAULT_CORS_ALLOW_ORIGINS,
    throttleRateLimit: 500,
    throttleBurstLimit: 1000,
    webSocketAccessLogs: false,
    http5xxAlarmPercent: 5,
    httpLatencyP99AlarmMs: 5000,
    accountConcurrencyAlarmThreshold: 800,
    removalPolicy: stage === 'prod' ? RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE : RemovalPolicy.DESTROY,
    tableDeletionProtection: stage === 'prod',
    edge: true,
    waf: false,
    wafRateLimit: 300,
    ...withoutUndefined(overrides),
  };
  if (!/^[A-Za-z][A-Za-z0-9-]{0,20}$/.test(config.stage)) {
    throw new Error(`stage must be a letter followed by up to 20 letters, digits or dashes, got "${config.stage}"`);
  }
  if (!Number.isInteger(config.rateLimitMessagesPerMinute) || config.rateLimitMessagesPerMinute <= 0) {
    throw new Error(`rateLimitMessagesPerMinute must be a positive integer, got ${config.rateLimitMessagesPerMinute}`);
  }
  if (!isVapidSubject(config.vapidSubject)) {
    throw new Error(`vapidSubject must begin with mailto: or https://, got "${config.vapidSubject}"`);
  }
  if (!/^[A-Za-z0-9_.-]{1,64}$/.test(config.pushEnvironment)) {
    throw new Error(`pushEnvironment must be 1-64 letters, digits or _ . -, got "${config.pushEnvironment}"`);
  }
  for (const setting of ['streamReservedConcurrency', 'aiReservedConcurrency'] as const) {
    const reserved = config[setting];
    if (reserved !== undefined && (!Number.isInteger(reserved) || reserved < MINIMUM_RESERVED_CONCURRENCY)) {
      throw new Error(
        `${setting} must be an integer of at least ${MINIMUM_RESERVED_CONCURRENCY}, or unset (no reservation), got ${reserved}. ` +
          `A reservation needs an account concurrency quota of ${LAMBDA_UNRESERVED_MINIMUM} plus every reservation (docs/operations.md).`,
      );
    }
  }
  for (const setting of [
    'aiThrottleRateLimit',
    'aiThrottleBurstLimit',
    'httpLatencyP99AlarmMs',
    'accountConcurrencyAlarmThreshold',
  ] as const) {
    if (!Number.isInteger(config[setting]) || config[setting] < 1) {
      throw new Error(`${setting} must be a positive integer, got ${config[setting]}`);
    }
  }
  if (config.removalPolicy === RemovalPolicy.RETAIN) {
    throw new Error('removalPolicy RETAIN would leave a rolled-back first deploy behind, billed: use RETAIN_ON_UPDATE_OR_DELETE');
  }
  for (const setting of ['digestEmailFrom', 'digestEmailIdentity'] as const) {
    const value = config[setting];
    if (value !== undefined && !/^[^\s@/]+@[^\s@/]+\.[^\s@/]+$|^[A-Za-z0-9.-]+\.[A-Za-z]{2,}$/.test(value)) {
      throw new Error(`${setting} must be an e-mail address${setting === 'digestEmailIdentity' ? ' or a domain' : ''}, got "${value}"`);
    }
  }
  if (config.callsServerUrl !== undefined && !/^(wss?|https?):\/\/[^/\s]+/.test(config.callsServerUrl)) {
    throw new Error(`callsServerUrl must be a ws(s):// or http(s):// URL, got "${config.callsServerUrl}"`);
  }
  if (config.callsApiKey !== undefined && !/^\S{1,200}$/.test(config.callsApiKey)) {
    throw new Error('callsApiKey must be 1-200 characters without spaces');
  }
  for (const [setting, url] of Object.entries(config.providerUrls)) {
    if (!/^https?:\/\/[^/]/.test(url)) throw new Error(`${setting} must be an http(s) URL, got "${url}"`);
  }
  validateEdge(config);
  return config;
}

/** The edge settings: each needs `edge`, a domain needs its certificate, and a web ACL comes one way. */
function validateEdge(config: ChatConfig): void {
  const edgeOnly = (['domainName', 'certificateArn', 'hostedZoneId', 'webAclArn'] as const).filter((key) => config[key] !== undefined);
  if (!config.edge && (edgeOnly.length > 0 || config.waf)) {
    throw new Error(`${[...edgeOnly, ...(config.waf ? ['waf'] : [])].join(', ')} need edge=true (the CloudFront distribution)`);
  }
  if (config.domainName !== undefined && !/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(config.domainName)) {
    throw new Error(`domainName must be a lower-case host name such as chat.example.com, got "${config.domainName}"`);
  }
  if ((config.domainName === undefined) !== (config.certificateArn === undefined)) {
    throw new Error('domainName and certificateArn go together: CloudFront serves a domain of its own only with its certificate');
  }
  if (
    config.certificateArn !== undefined &&
    !/^arn:aws[a-z-]*:acm:us-east-1:\d{12}:certificate\/[A-Za-z0-9-]+$/.test(config.certificateArn)
  ) {
    throw new Error(
      `certificateArn must be an ACM certificate ARN in us-east-1 (CloudFront reads certificates there only), got "${config.certificateArn}"`,
    );
  }
  if (config.hostedZoneId !== undefined && (config.domainName === undefined || !/^Z[A-Z0-9]{1,31}$/.test(config.hostedZoneId))) {
    throw new Error(`hostedZoneId must be a Route 53 zone id (Z...) and needs domainName, got "${config.hostedZoneId}"`);
  }
  if (config.waf && config.webAclArn !== undefined) throw new Error('Set waf=true or webAclArn, not both');
  if (config.webAclArn !== undefined && !/^arn:aws[a-z-]*:wafv2:us-east-1:\d{12}:global\/webacl\/[\w-]+\/[\w-]+$/.test(config.webAclArn)) {
    throw new Error(`webAclArn must be a CloudFront-scope (global) WAFv2 web ACL ARN in us-east-1, got "${config.webAclArn}"`);
  }
  if (!Number.isInteger(config.wafRateLimit) || config.wafRateLimit < 10 || config.wafRateLimit > 2_000_000_000) {
    throw new Error(`wafRateLimit must be an integer from 10 (WAF's minimum) up, got ${config.wafRateLimit}`);
  }
}

/** Every CDK context key the app reads (`-c key=value` or cdk.json "context"); docs/operations.md lists them. */
export const CHAT_CONTEXT_KEYS = [
  'stage',
  'rateLimitMessagesPerMinute',
  'vapidSubject',
  'pushEnvironment',
  ...AI_MODEL_SETTINGS,
  'streamReservedConcurrency',
  'aiReservedConcurrency',
  'aiThrottleRateLimit',
  'aiThrottleBurstLimit',
  ...Object.values(outboundHosts).map((host) => host.setting),
  'dailyDigestEnabled',
  'attachmentsEnabled',
  'digestEmailFrom',
  'digestEmailIdentity',
  'callsServerUrl',
  'callsApiKey',
  'logLevel',
  'corsAllowOrigins',
  'throttleRateLimit',
  'throttleBurstLimit',
  'webSocketAccessLogs',
  'tableDeletionProtection',
  'alarmEmail',
  'http5xxAlarmPercent',
  'httpLatencyP99AlarmMs',
  'accountConcurrencyAlarmThreshold',
  'edge',
  'domainName',
  'certificateArn',
  'hostedZoneId',
  'waf',
  'wafRateLimit',
  'webAclArn',
  'account',
  'region',
] as const;
export type ChatContextKey = (typeof CHAT_CONTEXT_KEYS)[number];

/** Context keys the app read once, with what replaced them: a deploy command written for an older version fails instead of being half obeyed. */
const OBSOLETE_CONTEXT_KEYS: Readonly<Record<string, string>> = {
  operatorKey:
    'is gone: nothing secret is configuration. Secrets Manager generates the operator key at the first deploy; ' +
    'read it from the secret the OperatorKeySecretArn output names (docs/operations.md, "First deploy")',
  streamConcurrency: 'was renamed streamReservedConcurrency, and is now off unless set (docs/operations.md)',
  ...Object.fromEntries(
    Object.entries(secretDefinitions).map(([secretId, definition]) => [
      definition.setting,
      `is a secret, never configuration: on AWS it is the Secrets Manager secret ${secretId} ` +
        `(the ${secretOutputId(secretId as SecretId)} output; docs/operations.md, "First deploy")`,
    ]),
  ),
};

/**
 * Context keys that belong to the CDK (feature flags `@aws-cdk/...`, `aws:cdk:*` set by the CLI,
 * lookup results cached in cdk.context.json such as `availability-zones:account=...`) or to a
 * library: every one has a colon or starts with `@`, which no key of this app does.
 */
const isCdkContextKey = (key: string) => key.includes(':') || key.startsWith('@') || key === 'acknowledged-issue-numbers';

/**
 * Fails for any context key the app does not read, naming it, so that a typo (`alarmEmial`) or a key
 * of an older version (`operatorKey`) stops the synth instead of deploying without the setting.
 */
export function rejectUnknownContextKeys(node: Node): void {
  const known = new Set<string>(CHAT_CONTEXT_KEYS);
  const problems = Object.keys(node.getAllContext() as Record<string, unknown>)
    .filter((key) => !known.has(key) && !isCdkContextKey(key))
    .sort()
    .map((key) => (key in OBSOLETE_CONTEXT_KEYS ? `Context key ${key} ${OBSOLETE_CONTEXT_KEYS[key]}.` : `Unknown context key ${key}.`));
  if (problems.length > 0) {
    throw new Error(
      `${problems.join('\n')}\nThe app reads these context keys (-c key=value or cdk.json "context"; docs/operations.md, "Configuration"): ` +
        `${CHAT_CONTEXT_KEYS.join(', ')}.`,
    );
  }
}

/**
 * Reads {@link ChatConfig} from CDK context (`cdk synth -c stage=prod -c alarmEmail=...`); unset keys
 * keep their defaults, and a key the app does not read fails.
 */
export function chatConfigFromContext(node: Node): ChatConfig {
  return resolveChatConfig(chatContextOverrides(node));
}

/** The {@link ChatConfig} fields set in CDK context, unresolved (no defaults applied); a key the app does not read fails. */
export function chatContextOverrides(node: Node): Partial<ChatConfig> {
  rejectUnknownContextKeys(node);
  const text = (key: ChatContextKey): string | undefined => {
    const value: unknown = node.tryGetContext(key);
    return value === undefined || value === null ? undefined : String(value);
  };
  const number = (key: ChatContextKey): number | undefined => {
    const value = text(key);
    if (value === undefined) return undefined;
    const parsed = Number(value);
    if (!Number.isFinite(parsed)) throw new Error(`Context ${key} must be a number, got "${value}"`);
    return parsed;
  };
  const flag = (key: ChatContextKey): boolean | undefined => (text(key) === undefined ? undefined : text(key) === 'true');
  // `off` (or leaving the key out) means no reservation; any other value must pass resolveChatConfig.
  const reservation = (key: ChatContextKey): number | undefined => (text(key)?.toLowerCase() === 'off' ? undefined : number(key));
  const origins = text('corsAllowOrigins');
  return withoutUndefined({
    stage: text('stage'),
    rateLimitMessagesPerMinute: number('rateLimitMessagesPerMinute'),
    vapidSubject: text('vapidSubject'),
    pushEnvironment: text('pushEnvironment'),
    aiModels: Object.fromEntries(
      AI_MODEL_SETTINGS.flatMap((setting) => {
        const model = text(setting);
        return model === undefined ? [] : [[setting, model]];
      }),
    ),
    streamReservedConcurrency: reservation('streamReservedConcurrency'),
    aiReservedConcurrency: reservation('aiReservedConcurrency'),
    aiThrottleRateLimit: number('aiThrottleRateLimit'),
    aiThrottleBurstLimit: number('aiThrottleBurstLimit'),
    providerUrls: Object.fromEntries(
      Object.values(outboundHosts).flatMap((host) => {
        const url = text(host.setting);
        return url === undefined ? [] : [[host.setting, url]];
      }),
    ),
    dailyDigestEnabled: flag('dailyDigestEnabled'),
    attachmentsEnabled: flag('attachmentsEnabled'),
    digestEmailFrom: text('digestEmailFrom'),
    digestEmailIdentity: text('digestEmailIdentity'),
    callsServerUrl: text('callsServerUrl'),
    callsApiKey: text('callsApiKey'),
    logLevel: text('logLevel'),
    corsAllowOrigins: origins
      ?.split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
    throttleRateLimit: number('throttleRateLimit'),
    throttleBurstLimit: number('throttleBurstLimit'),
    webSocketAccessLogs: flag('webSocketAccessLogs'),
    tableDeletionProtection: flag('tableDeletionProtection'),
    alarmEmail: text('alarmEmail'),
    http5xxAlarmPercent: number('http5xxAlarmPercent'),
    httpLatencyP99AlarmMs: number('httpLatencyP99AlarmMs'),
    accountConcurrencyAlarmThreshold: number('accountConcurrencyAlarmThreshold'),
    edge: flag('edge'),
    domainName: text('domainName'),
    certificateArn: text('certificateArn'),
    hostedZoneId: text('hostedZoneId'),
    waf: flag('waf'),
    wafRateLimit: number('wafRateLimit'),
    webAclArn: text('webAclArn'),
    account: text('account'),
    region: text('region'),
  } satisfies Partial<ChatConfig>);
}

/** Environment variables every function gets from the shared configuration. */
export function sharedEnvironment(config: ChatConfig): Record<string, string> {
  return {
    RATE_LIMIT_MESSAGES_PER_MINUTE: String(config.rateLimitMessagesPerMinute),
    VAPID_SUBJECT: config.vapidSubject,
    PUSH_ENVIRONMENT: config.pushEnvironment,
    ...config.aiModels,
    LOG_LEVEL: config.logLevel,
    // Only when set: the call-token function answers stubs without them.
    ...(config.callsServerUrl === undefined ? {} : { CALLS_SERVER_URL: config.callsServerUrl }),
    ...(config.callsApiKey === undefined ? {} : { CALLS_API_KEY: config.callsApiKey }),
  };
}

/**
 * The deploy-time settings binding kinds read (`GrantContext.settings`): provider base URLs and the
 * digest's SES sender identity.
 */
export function bindingSettings(config: ChatConfig): Record<string, string | undefined> {
  return {
    ...config.providerUrls,
    DIGEST_EMAIL_FROM: config.digestEmailFrom,
    DIGEST_EMAIL_IDENTITY: config.digestEmailIdentity ?? config.digestEmailFrom,
  };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
