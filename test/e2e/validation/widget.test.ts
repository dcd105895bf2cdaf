import { beforeAll } from 'vitest';
import { api, uniqueId } from '../../support/api';
import {
  createValidationProject,
  describeValidationMatrix,
  drop,
  idVariants,
  long,
  type RouteRequests,
  set,
  type ValidationProject,
  type Variant,
} from '../../support/matrices/validation-driver';

/** Bad input to the embed widget's routes; the checks common to every route are the matrix's (`validation-driver.ts`). */

const SHOP = 'https://shop.example.com';

let fixture: ValidationProject;
let publicRoomId: string;

beforeAll(async () => {
  fixture = await createValidationProject('validation-widget');
  publicRoomId = uniqueId('public');
  await api('/rooms', { token: fixture.memberToken, body: { id: publicRoomId, type: 'public' } });
  await api('/admin/widget', { method: 'PUT', apiKey: fixture.project.apiKey, body: { allowedOrigins: [SHOP], supportRoomId: null } });
});

const admin = () => ({ token: fixture.adminToken });

const requests: RouteRequests = {
  CreateGuestSession: {
    path: () => '/auth/guest',
    auth: () => ({ headers: { origin: SHOP } }),
    body: () => ({ projectId: fixture.project.projectId, roomId: publicRoomId, name: 'Visitor' }),
    success: 201,
    roomInBody: true,
  },
  GetWidgetSettings: { path: () => '/admin/widget', auth: admin, success: 200 },
  PutWidgetSettings: {
    path: () => '/admin/widget',
    auth: admin,
    body: () => ({ allowedOrigins: [SHOP, 'http://localhost:5173'], supportRoomId: fixture.roomId }),
    success: 200,
  },
};

const origins = (...values: unknown[]) => set('allowedOrigins', values);

const fieldVariants: Record<string, Variant[]> = {
  CreateGuestSession: [
    ['projectId missing', drop('projectId'), 'body.projectId'],
    ['projectId a number', set('projectId', 42), 'body.projectId'],
    ['projectId not a project id', set('projectId', 'Not A Project'), 'body.projectId'],
    ...idVariants('roomId', false),
    ['name a number', set('name', 42), 'body.name'],
    ['name empty', set('name', ''), 'body.name'],
    ['name blank', set('name', '   '), 'body.name'],
    ['name of 65 characters', set('name', long(65)), 'body.name'],
  ],
  PutWidgetSettings: [
    ['allowedOrigins missing', drop('allowedOrigins'), 'body.allowedOrigins'],
    ['allowedOrigins a string', set('allowedOrigins', SHOP), 'body.allowedOrigins'],
    ['allowedOrigins null', set('allowedOrigins', null), 'body.allowedOrigins'],
    ['an origin a number', origins(42), 'body.allowedOrigins.0'],
    ['an origin with a path', origins(`${SHOP}/shop`), 'body.allowedOrigins.0'],
    ['an origin with a query', origins(`${SHOP}?a=1`), 'body.allowedOrigins.0'],
    ['an origin of plain http', origins('http://shop.example.com'), 'body.allowedOrigins.0'],
    ['an origin of another scheme', origins('ftp://shop.example.com'), 'body.allowedOrigins.0'],
    ['the second origin a wildcard', origins(SHOP, '*'), 'body.allowedOrigins.1'],
    [
      '21 origins',
      set(
        'allowedOrigins',
        Array.from({ length: 21 }, (_, index) => `https://s${index}.example.com`),
      ),
      'body.allowedOrigins',
    ],
    ['supportRoomId missing', drop('supportRoomId'), 'body.supportRoomId'],
    ...idVariants('supportRoomId', false).filter(([label]) => !label.endsWith('null')),
  ],
};

describeValidationMatrix('Widget', requests, fieldVariants);
