import { subscribeWebPush } from '#domain/push/targets';
import { created, httpHandler, ok } from '#edge/http';
import { ForbiddenError } from '#shared/errors';
import { assertAllowedTargetUrl } from '#shared/outbound-guard';
import { subscribeBody } from './schemas';

/**
 * The endpoint is a URL the service will call: https only, and never a private host (the SSRF
 * guard of webhooks). `X-Service-Project-Id`, when sent, must name the token's project.
 */
export const handler = httpHandler('SubscribeWebPush', { body: subscribeBody }, async ({ body, headers, user }) => {
  const namedProject = headers['x-service-project-id'];
  if (namedProject !== undefined && namedProject !== user.projectId) {
    throw new ForbiddenError('X-Service-Project-Id does not match the token', 'project_mismatch');
  }
  const endpoint = assertAllowedTargetUrl(body.endpoint, 'body.endpoint', {}, { what: 'Push endpoints', code: 'push_endpoint' });
  const { subscription, created: isNew } = await subscribeWebPush(user.projectId, user.userId, { ...body, endpoint: endpoint.href });
  return isNew ? created(subscription) : ok(subscription);
});
