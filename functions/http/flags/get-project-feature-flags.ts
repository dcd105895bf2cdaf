import { projectOverrides } from '#domain/flags/feature-flags';
import { httpHandler, ok } from '#edge/http';

export const handler = httpHandler('GetProjectFeatureFlags', {}, async ({ caller }) =>
  ok({ overrides: await projectOverrides(caller.projectId) }),
);
