import { startProjectDigest } from '#domain/digest/run';
import { httpHandler } from '#edge/http';
import { runDigestBody } from './schemas';

/** Queued, not done: the answer comes before the first user is delivered to. */
export const handler = httpHandler('RunDigest', { body: runDigestBody }, async ({ body, caller }) => ({
  status: 202,
  body: await startProjectDigest(caller.projectId, body.digestDate, body.maxUsers),
}));
