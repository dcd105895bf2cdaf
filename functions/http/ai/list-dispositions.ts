import { listDispositions } from '#domain/ai/dispositions';
import { httpHandler, ok } from '#edge/http';

/** The defaults (`builtIn: true`), then the project's own codes. */
export const handler = httpHandler('ListDispositions', {}, async ({ caller }) =>
  ok({ dispositions: await listDispositions(caller.projectId) }),
);
