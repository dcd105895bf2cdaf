import { setObjectives } from '#domain/stats/figures';
import { httpHandler, ok } from '#edge/http';
import { actorId } from '#shared/auth';
import { objectivesBody } from './schemas';

/** Replaces the project's objectives; 200 with them. */
export const handler = httpHandler('PutStatsObjectives', { body: objectivesBody }, async ({ body, caller }) =>
  ok(await setObjectives(caller.projectId, body, actorId(caller))),
);
