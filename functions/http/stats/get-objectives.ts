import { objectivesOf } from '#domain/stats/figures';
import { httpHandler, ok } from '#edge/http';

/** 200 with the objectives the project is held to, and whether they are its own or the settings'. */
export const handler = httpHandler('GetStatsObjectives', {}, async ({ caller }) => ok(await objectivesOf(caller.projectId)));
