import type { Area } from './types.ts';

/** Voice and video: call tokens for a LiveKit-compatible server, and the voice AI's client-measured latencies against the spec's targets. */
export const calls: Area = {
  id: 'Calls',
  summary: 'Call tokens for a LiveKit-compatible server, voice AI latency samples and their percentiles against the targets',
  httpRoutes: [
    {
      id: 'CreateCallToken',
      method: 'POST',
      path: '/admin/calls/token',
      handler: 'http/calls/create-call-token.ts',
      // The token's identity is the calling user: the API key is no one to call as.
      auth: 'user',
      minRole: 'member',
      rateLimit: { bucket: 'call-tokens', per: 'user', setting: 'RATE_LIMIT_CALL_TOKENS_PER_MINUTE' },
      bindings: ['table:read', 'secret:calls-secret'],
      summary:
        'A short-lived token to join the call of a room the caller is a member of (a stub marked `stub: true` without call-server settings)',
    },
    {
      id: 'RecordVoiceAiMetrics',
      method: 'POST',
      path: '/admin/voice-ai/metrics',
      handler: 'http/calls/record-voice-ai-metrics.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:write'],
      summary: 'Record client-measured voice AI latencies (realtime, chunked REST, barge-in), one or a batch of up to 100',
    },
    {
      id: 'GetVoiceAiStats',
      method: 'GET',
      path: '/admin/voice-ai/stats',
      handler: 'http/calls/get-voice-ai-stats.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read'],
      summary: 'p50, p95 and count of each latency kind over a window, beside the targets and whether each is met',
    },
  ],
};
