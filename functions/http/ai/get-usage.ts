import { usage } from '#domain/ai/quota';
import { httpHandler, ok } from '#edge/http';

export const handler = httpHandler('GetAiUsage', {}, async ({ caller }) => ok(await usage(caller.projectId)));
