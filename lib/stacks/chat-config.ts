import { RemovalPolicy } from 'aws-cdk-lib';
import type { Node } from 'constructs';
import { isVapidSubject } from '../../functions/shared/urls.ts';
import { outboundHosts } from '../bindings.ts';

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
   * taking the concurrency `$default` and `POST /messages` need. Reserved concurrency comes out of
   * the account's pool, which must keep 100 unreserved: lower this on accounts with a small limit.
   * @default 100
   */
  readonly streamConcurrency: number;
  /**
   * Provider base URLs (`FCM_BASE_URL`, `AI_BASE_URL`, ... of `outboundHosts` in `lib/bindings.ts`),
   * for functions bound to them; unset ones keep the real hosts.
   * @default {}
   */
  readonly providerUrls: Readonly<Record<string, string>>;
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
   * What happens to log groups and the alarm topic's KMS key when they are removed from the stack.
   * The table is always retained.
   * @default RemovalPolicy.RETAIN for the stage 'prod', RemovalPolicy.DESTROY otherwise
   */
  readonly removalPolicy: RemovalPolicy;
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
    streamConcurrency: 100,
    providerUrls: {},
    logLevel: 'INFO',
    corsAllowOrigins: ['*'],
    throttleRateLimit: 500,
    throttleBurstLimit: 1000,
    webSocketAccessLogs: false,
    http5xxAlarmPercent: 5,
    removalPolicy: stage === 'prod' ? RemovalPolicy.RETAIN : RemovalPolicy.DESTROY,
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
  if (!Number.isInteger(config.streamConcurrency) || config.streamConcurrency < 1) {
    throw new Error(`streamConcurrency must be a positive integer, got ${config.streamConcurrency}`);
  }
  for (const [setting, url] of Object.entries(config.providerUrls)) {
    if (!/^https?:\/\/[^/]/.test(url)) throw new Error(`${setting} must be an http(s) URL, got "${url}"`);
  }
  return config;
}

/**
 * Reads {@link ChatConfig} from CDK context (`cdk synth -c stage=prod -c alarmEmail=...`); unset keys
 * keep their defaults.
 */
export function chatConfigFromContext(node: Node): ChatConfig {
  return resolveChatConfig(chatContextOverrides(node));
}

/** The {@link ChatConfig} fields set in CDK context, unresolved (no defaults applied). */
export function chatContextOverrides(node: Node): Partial<ChatConfig> {
  const text = (key: string): string | undefined => {
    const value: unknown = node.tryGetContext(key);
    return value === undefined || value === null ? undefined : String(value);
  };
  const number = (key: string): number | undefined => {
    const value = text(key);
    if (value === undefined) return undefined;
    const parsed = Number(value);
    if (!Number.isFinite(parsed)) throw new Error(`Context ${key} must be a number, got "${value}"`);
    return parsed;
  };
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
    streamConcurrency: number('streamConcurrency'),
    providerUrls: Object.fromEntries(
      Object.values(outboundHosts).flatMap((host) => {
        const url = text(host.setting);
        return url === undefined ? [] : [[host.setting, url]];
      }),
    ),
    logLevel: text('logLevel'),
    corsAllowOrigins: origins
      ?.split(',')
      .map((origin) => origin.trim())
      .filter(Boolean),
    throttleRateLimit: number('throttleRateLimit'),
    throttleBurstLimit: number('throttleBurstLimit'),
    webSocketAccessLogs: text('webSocketAccessLogs') === undefined ? undefined : text('webSocketAccessLogs') === 'true',
    alarmEmail: text('alarmEmail'),
    http5xxAlarmPercent: number('http5xxAlarmPercent'),
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
  };
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}
