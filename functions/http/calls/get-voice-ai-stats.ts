import { voiceLatencyStats } from '#domain/calls/voice-latency';
import { httpHandler, ok } from '#edge/http';
import { voiceStatsQuery } from './schemas';

export const handler = httpHandler('GetVoiceAiStats', { query: voiceStatsQuery }, async ({ query, caller }) =>
  ok(await voiceLatencyStats(caller.projectId, query.window)),
);
