import { recordVoiceLatencies } from '#domain/calls/voice-latency';
import { httpHandler, ok } from '#edge/http';
import { voiceMetricsBody } from './schemas';

export const handler = httpHandler('RecordVoiceAiMetrics', { body: voiceMetricsBody }, async ({ body, caller }) =>
  ok(await recordVoiceLatencies(caller.projectId, body)),
);
