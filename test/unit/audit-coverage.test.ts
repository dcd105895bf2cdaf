import { describe, expect, it } from 'vitest';
import { httpRoutes } from '#wiring';
import { isPrivilegedRoute, SENSITIVE_USER_ROUTES, UNAUDITED_ROUTES } from '#wiring/audit';

/**
 * Every privileged route of the wiring table (`isPrivilegedRoute`: a change open only to the
 * operator, the API key or moderators and above, plus the sensitive user routes) names its audit
 * action, so a new admin route without one fails here; and no other route does.
 */
describe('audit entries of the wiring table', () => {
  it('are on every privileged route and on no other', () => {
    // Assess
    expect(httpRoutes.filter((route) => isPrivilegedRoute(route) && !route.audit).map((route) => route.id)).toEqual([]);
    expect(httpRoutes.filter((route) => route.audit && !isPrivilegedRoute(route)).map((route) => route.id)).toEqual([]);
  });

  it('name each action once, as <area>.<verb>', () => {
    // Prepare
    const actions = httpRoutes.flatMap((route) => (route.audit ? [route.audit.action] : []));

    // Assess
    expect(actions.filter((action) => !/^[a-z_]+\.[a-z_]+$/.test(action))).toEqual([]);
    expect(new Set(actions).size).toBe(actions.length);
  });

  it('list sensitive user routes and unaudited routes that exist', () => {
    // Assess
    expect(SENSITIVE_USER_ROUTES.filter((id) => !httpRoutes.some((route) => route.id === id))).toEqual([]);
    expect(Object.keys(UNAUDITED_ROUTES).filter((id) => !httpRoutes.some((route) => route.id === id))).toEqual([]);
  });

  it('audit POST /auth/token only for a token of moderator or above, and room member removals only by someone else', () => {
    // Prepare
    const entry = (id: string) => httpRoutes.find((route) => route.id === id)?.audit;

    // Assess
    expect(entry('CreateToken')?.only).toEqual({ field: 'body.roles', roleAtLeast: 'moderator' });
    expect(entry('RemoveRoomMember')?.only).toEqual({ field: 'params.userId', notCaller: true });
    expect(entry('AddRoomMember')).toBeUndefined();
  });

  it('copy only ids from bodies and answers, never a field that holds a secret or text', () => {
    // Prepare
    const fields = httpRoutes.flatMap((route) => route.audit?.target ?? []);

    // Assess
    expect(fields.filter((field) => /secret$|token$|password|content|text|key$|url/i.test(field.split('.')[1] ?? ''))).toEqual([]);
  });
});
