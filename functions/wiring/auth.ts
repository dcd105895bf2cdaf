import type { Area } from './types.ts';

/** Projects (tenants) and the credentials of their users. */
export const auth: Area = {
  id: 'Auth',
  summary: 'Projects, their keys, user tokens and sign-in',
  httpRoutes: [
    {
      id: 'CreateProject',
      method: 'POST',
      path: '/platform/projects',
      handler: 'http/platform/create-project.ts',
      auth: 'operator',
      bindings: ['table:read', 'table:write', 'secret:operator-key', 'secret:signing-key'],
      audit: { action: 'projects.create', target: ['response.projectId'] },
      summary: 'Create a project (tenant); returns its API key and signing secret once',
    },
    {
      id: 'RotateProjectKeys',
      method: 'POST',
      path: '/platform/projects/{projectId}/rotate-keys',
      handler: 'http/platform/rotate-project-keys.ts',
      auth: 'operator',
      bindings: ['table:read', 'table:write', 'secret:operator-key', 'secret:signing-key'],
      audit: { action: 'keys.rotate' },
      summary: 'Replace a project API key and/or JWT signing secret',
    },
    {
      id: 'CreateToken',
      method: 'POST',
      path: '/auth/token',
      handler: 'http/auth/create-token.ts',
      auth: 'apiKey',
      bindings: ['table:read', 'secret:signing-key'],
      // Customer backends mint a token at every login: only a token of moderator or above (a privilege
      // granted) is audited, or the audit log would be a login log (docs/audit.md).
      audit: {
        action: 'tokens.issue',
        target: ['body.userId', 'body.roles', 'body.sub', 'body.expiresIn'],
        only: { field: 'body.roles', roleAtLeast: 'moderator' },
      },
      summary: 'Mint a user JWT for the API key project',
    },
    {
      id: 'SignIn',
      method: 'POST',
      path: '/auth/signin',
      handler: 'http/auth/sign-in.ts',
      auth: 'none',
      rateLimit: { bucket: 'signin', per: 'ip', setting: 'RATE_LIMIT_SIGNIN_PER_IP_PER_MINUTE' },
      bindings: ['table:read', 'table:write', 'secret:signing-key'],
      summary: 'Exchange user credentials for a session JWT (rate limited per IP, locked per user after repeated failures)',
    },
    {
      id: 'SetUserCredentials',
      method: 'PUT',
      path: '/users/{userId}/credentials',
      handler: 'http/auth/set-user-credentials.ts',
      auth: 'apiKey',
      bindings: ['table:read', 'table:write'],
      audit: { action: 'credentials.set' },
      summary: 'Set a user password and roles for sign-in',
    },
  ],
};
