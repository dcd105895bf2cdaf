import { rotateProjectKeys } from '#domain/projects/projects';
import { httpHandler, ok } from '#edge/http';
import { operatorAuth } from '#edge/operator-auth';
import { PROJECT_ID_PATTERN } from '#shared/ids';
import * as z from '#shared/schema';

const params = z.object({ projectId: z.string().check(z.regex(PROJECT_ID_PATTERN, 'must be a project id')) });
const body = z._default(z.strictObject({ apiKey: z._default(z.boolean(), true), signingSecret: z._default(z.boolean(), false) }), {
  apiKey: true,
  signingSecret: false,
});

export const handler = httpHandler(
  'RotateProjectKeys',
  { params, body },
  async ({ params, body }) => ok(await rotateProjectKeys(params.projectId, body)),
  operatorAuth,
);
