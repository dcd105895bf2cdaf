import { setDispositions } from '#domain/ai/dispositions';
import { httpHandler, ok } from '#edge/http';
import { actorId } from '#shared/auth';
import { dispositionsBody } from './handoff-schemas';

/** Replaces the project's own codes; 200 with the whole list, defaults first. */
export const handler = httpHandler('SetDispositions', { body: dispositionsBody }, async ({ body, caller }) =>
  ok({ dispositions: await setDispositions(caller.projectId, body.dispositions, actorId(caller)) }),
);
