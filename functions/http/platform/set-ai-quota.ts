import { setMonthlyQuota, usage } from '#domain/ai/quota';
import { httpHandler, ok } from '#edge/http';
import { operatorAuth } from '#edge/operator-auth';
import { loadProject } from '#shared/auth';
import { NotFoundError } from '#shared/errors';
import { PROJECT_ID_PATTERN } from '#shared/ids';
import * as z from '#shared/schema';

const params = z.object({ projectId: z.string().check(z.regex(PROJECT_ID_PATTERN, 'must be a project id')) });
const body = z.strictObject({ monthlyInvocations: z.nullable(z.number().check(z.int(), z.nonnegative(), z.maximum(100_000_000))) });

/** The operator's lever on AI spend per tenant; `null` returns the project to `AI_MONTHLY_QUOTA`. */
export const handler = httpHandler(
  'SetProjectAiQuota',
  { params, body },
  async ({ params, body }) => {
    if (!(await loadProject(params.projectId))) throw new NotFoundError('project_not_found', 'Project not found');
    await setMonthlyQuota(params.projectId, body.monthlyInvocations);
    return ok(await usage(params.projectId));
  },
  operatorAuth,
);
