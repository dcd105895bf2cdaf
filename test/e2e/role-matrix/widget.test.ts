import { beforeAll, describe, expect, it } from 'vitest';
import { httpRoutes } from '#wiring';
import { api, uniqueId } from '../../support/api';
import { describeRoleMatrix, roleMatrixBeforeAll } from '../../support/matrices/role-driver';

/**
 * Who may set where the widget is embedded: project admins and the API key read and replace the
 * widget settings; `POST /auth/guest` takes no credentials (its refusals are the widget suite's,
 * test/e2e/widget-guest.test.ts). And what a real guest session may not do: every route of the
 * wiring table with a minimum role above `guest` refuses its token. The matrix is `role-driver.ts`.
 */

const SHOP = 'https://shop.example.com';
const roles = roleMatrixBeforeAll('roles-widget');
const { project } = roles;

const settingsOf = async () => (await api('/admin/widget', { apiKey: project.apiKey })).body;

describeRoleMatrix('Widget', roles, {
  minRole: {
    GetWidgetSettings: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const response = await api('/admin/widget', auth);
        return {
          ...response,
          check: async (allowed) => expect(response.body.allowedOrigins === undefined).toBe(!allowed),
        };
      },
    },
    PutWidgetSettings: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const origin = `https://${uniqueId('site')}.example.com`;
        const response = await api('/admin/widget', {
          ...auth,
          method: 'PUT',
          body: { allowedOrigins: [SHOP, origin], supportRoomId: null },
        });
        return { ...response, check: async (allowed) => expect((await settingsOf()).allowedOrigins.includes(origin)).toBe(allowed) };
      },
    },
  },
});

/** Routes a guest's role is below: their path parameters filled in, since the role is checked before anything is read. */
const aboveGuest = httpRoutes.filter(
  (route) => route.minRole !== undefined && route.minRole !== 'guest' && (route.auth === 'user' || route.auth === 'userOrService'),
);

describe('a guest session from POST /auth/guest', () => {
  let guestToken: string;
  beforeAll(async () => {
    await api('/admin/widget', { method: 'PUT', apiKey: project.apiKey, body: { allowedOrigins: [SHOP], supportRoomId: null } });
    const session = await api('/auth/guest', { headers: { origin: SHOP }, body: { projectId: project.projectId } });
    if (session.status !== 201) throw new Error(`guest session failed: ${session.status} ${JSON.stringify(session.body)}`);
    guestToken = session.body.token;
  });

  it('covers room creation and the admin routes', () => {
    // Assess
    const ids = aboveGuest.map((route) => route.id);
    expect(ids).toEqual(expect.arrayContaining(['CreateRoom', 'PutWidgetSettings', 'SetProjectFeatureFlags']));
  });

  it.each(aboveGuest.map((route) => ({ id: route.id, method: route.method, path: route.path })))(
    'is refused $method $path ($id) with 403 forbidden',
    async ({ method, path }) => {
      // Act
      const concrete = path.replace(/\{(\w+)\}/g, (_, name: string) => uniqueId(name.toLowerCase()));
      const response = await api(concrete, {
        method,
        token: guestToken,
        headers: { origin: SHOP },
        ...(method === 'GET' || method === 'DELETE' ? {} : { body: {} }),
      });

      // Assess
      expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 403, code: 'forbidden' });
    },
  );
});
