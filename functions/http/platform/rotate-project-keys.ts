import { z } from 'zod';
import { PROJECT_ID_PATTERN, rotateProjectKeys } from '#domain/projects/projects';
import { httpHandler, ok } from '#shared/http';

const params = z.object({ projectId: z.string().regex(PROJECT_ID_PATTERN) });
const body = z
  .object({ apiKey: z.boolean().default(true), signingSecret: z.boolean().default(false) })
  .strict()
  .default({ apiKey: true, signingSecret: false });

export const handler = httpHandler('RotateProjectKeys', { params, body }, async ({ params, body }) =>
  ok(await rotateProjectKeys(params.projectId, body)),
);
