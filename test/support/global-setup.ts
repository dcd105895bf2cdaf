import type { TestProject } from 'vitest/node';
import { startLocalRuntime } from '../../lib/local/runtime';
import { startOpenAiServer } from './ai/openai-server';
import { type BridgePlatformsInfo, startBridgePlatforms } from './bridge-platforms';

export const OPERATOR_KEY = 'test-operator-key-0123456789abcdef';
/** The secret the marketplace signs `POST /internal/marketplace/audit-result` with. */
export const MARKETPLACE_AUDIT_SECRET = 'test-marketplace-audit-secret-0123456789abcdef';
/** The LiveKit-compatible call server the shared runtime issues tokens for (no server runs: tokens are verified offline). */
export const CALLS_SERVER = {
  url: 'wss://calls.example.test',
  apiKey: 'APItestcalls',
  apiSecret: 'test-calls-secret-0123456789abcdefghijklmnopq',
} as const;

export interface RuntimeInfo {
  readonly baseUrl: string;
  readonly wsUrl: string;
  readonly operatorKey: string;
  readonly env: Record<string, string>;
  readonly queueUrls: Record<string, string>;
  readonly eventTopicArn: string;
  readonly tableName: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    runtime: RuntimeInfo;
    /** The Slack, Discord and Matrix stand-ins the runtime's bridges talk to (`sharedBridgePlatforms()` steers them). */
    bridgePlatforms: BridgePlatformsInfo;
  }
}

/**
 * One local runtime for the integration and e2e suites, on free loopback ports, with every consumer
 * running (suites watch events through taps of their own on the event topic), stopped at the end.
 */
export default async function setup(project: TestProject) {
  // The AI routes answer from a local OpenAI-compatible server; suites that script its answers or
  // need AI off start runtimes of their own.
  const ai = await startOpenAiServer();
  // The bridge relay posts to local Slack and Discord stand-ins; they run here, in vitest's main
  // process, so tests read and steer them over HTTP (test/support/bridge-platforms/client.ts).
  const bridgePlatforms = await startBridgePlatforms();
  const runtime = await startLocalRuntime({
    port: 0,
    // Suites make rooms, register push targets and call the AI routes as the same few users many
    // times a minute; test/e2e/per-user-limits.test.ts, agents.test.ts and ai-helpers.test.ts hold
    // those limits on runtimes of their own, and agents.test.ts the model allow-list.
    env: {
      CHAT_OPERATOR_KEY: OPERATOR_KEY,
      RATE_LIMIT_MESSAGES_PER_MINUTE: '1000',
      RATE_LIMIT_ROOM_CREATION_PER_MINUTE: '1000',
      RATE_LIMIT_PUSH_REGISTRATION_PER_MINUTE: '1000',
      RATE_LIMIT_REPLY_SUGGESTIONS_PER_MINUTE: '1000',
      RATE_LIMIT_AGENT_INVOKE_PER_MINUTE: '1000',
      AI_BASE_URL: ai.url,
      ...bridgePlatforms.settings,
      AI_ALLOWED_MODELS: 'gpt-4o-mini,validation-model,some-model',
      // Sign-in lockouts short enough to watch grow (test/e2e/sign-in-throttle.test.ts), and a
      // per-IP budget the suites' sign-ins from 127.0.0.1 stay far below.
      SIGNIN_LOCKOUT_THRESHOLD: '3',
      SIGNIN_LOCKOUT_BASE_SECONDS: '1',
      SIGNIN_LOCKOUT_MAX_SECONDS: '2',
      RATE_LIMIT_SIGNIN_PER_IP_PER_MINUTE: '100',
      // The widget suites and the route matrices start guest sessions from 127.0.0.1; the limit's
      // own test spends a budget this size from an address of its own (test/e2e/widget-guest.test.ts).
      RATE_LIMIT_GUEST_SESSIONS_PER_IP_PER_MINUTE: '200',
      // A modest history takes the staged path of GET /gdpr/export (test/e2e/gdpr.test.ts), and the
      // matrices' GDPR calls as the same few users stay below the limit.
      GDPR_EXPORT_INLINE_MAX_BYTES: '32768',
      RATE_LIMIT_GDPR_PER_MINUTE: '1000',
      // The matrices file many reports as the same few users.
      RATE_LIMIT_REPORTS_PER_MINUTE: '1000',
      // Real call tokens (test/e2e/calls.test.ts verifies them with livekit-server-sdk); the stub
      // without these settings and the token limit run on a runtime of that file's own.
      CALLS_SERVER_URL: CALLS_SERVER.url,
      CALLS_API_KEY: CALLS_SERVER.apiKey,
      CALLS_API_SECRET: CALLS_SERVER.apiSecret,
      RATE_LIMIT_CALL_TOKENS_PER_MINUTE: '1000',
      RATE_LIMIT_SUPPORT_TICKETS_PER_MINUTE: '1000',
      // The marketplace audit callback verifies its signatures (test/e2e/audit.test.ts; unset on a runtime of that file's own).
      MARKETPLACE_AUDIT_SECRET: MARKETPLACE_AUDIT_SECRET,
      // The attachment suites and matrices upload as the same few users (test/e2e/attachments.test.ts holds the limit).
      RATE_LIMIT_UPLOADS_PER_MINUTE: '1000',
      // A failing webhook delivery ends `failed` within seconds rather than 96 minutes (the retry waits
      // of 60 s, 5 min, 30 min and 60 min become 30 ms, 150 ms, 0.9 s and 1.8 s), so the console's
      // browser test (test/browser/console.test.ts) can show one and replay it.
      WEBHOOK_RETRY_TIME_SCALE: '0.0005',
      // Suites send bursts into their rooms; a room turning hot by itself would move their sockets'
      // frames to the RoomDelivery window and their request counts off the sender's path. Hot rooms
      // are shown on runtimes of their own (test/e2e/coalesced-delivery.test.ts) or marked so.
      REALTIME_COALESCE_THRESHOLD_PER_SECOND: '100000',
    },
  });
  project.provide('runtime', {
    baseUrl: runtime.baseUrl,
    wsUrl: runtime.baseUrl.replace(/^http/, 'ws'),
    operatorKey: OPERATOR_KEY,
    env: { ...runtime.env },
    queueUrls: { ...runtime.queueUrls },
    eventTopicArn: runtime.eventTopicArn,
    tableName: runtime.tableName,
  });
  project.provide('bridgePlatforms', bridgePlatforms.info);
  return async () => {
    await runtime.stop();
    await ai.close();
    await bridgePlatforms.close();
  };
}
