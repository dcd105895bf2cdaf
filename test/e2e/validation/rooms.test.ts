import { beforeAll, describe, expect, it } from 'vitest';
import { api, uniqueId } from '../../support/api';
import {
  createValidationProject,
  describeValidationMatrix,
  drop,
  expectInvalid,
  idVariants,
  long,
  type RouteRequests,
  set,
  type Variant,
} from '../../support/matrices/validation-driver';

/** Bad input to the Rooms area's routes (rooms, members, E2E keys); the checks are the matrix's (`validation-driver.ts`). */

let adminToken: string;
let memberToken: string;
let roomId: string;

beforeAll(async () => {
  ({ adminToken, memberToken, roomId } = await createValidationProject('validation-rooms'));
});

/** How to make a request each route of the area accepts. */
const requests: RouteRequests = {
  CreateRoom: {
    path: () => '/rooms',
    auth: () => ({ token: adminToken }),
    body: () => ({ id: uniqueId('room'), type: 'group', name: 'n', description: 'd', members: ['bob'], e2eEnabled: false }),
    success: 201,
  },
  ListRooms: { path: () => '/rooms', auth: () => ({ token: memberToken }), success: 200 },
  GetRoom: { path: () => `/rooms/${roomId}`, auth: () => ({ token: adminToken }), success: 200 },
  UpdateRoom: {
    path: () => `/rooms/${roomId}`,
    auth: () => ({ token: adminToken }),
    body: () => ({ name: 'n', description: 'd', e2eEnabled: false, allowMemberPins: true }),
    success: 200,
  },
  ListRoomMembers: { path: () => `/rooms/${roomId}/members`, auth: () => ({ token: adminToken }), success: 200 },
  AddRoomMember: {
    path: () => `/rooms/${roomId}/members`,
    auth: () => ({ token: adminToken }),
    body: () => ({ userId: uniqueId('added'), role: 'member' }),
    success: 201,
  },
  RemoveRoomMember: { path: () => `/rooms/${roomId}/members/${uniqueId('gone')}`, auth: () => ({ token: adminToken }), success: 204 },
  GetRoomE2eKey: { path: () => `/rooms/${roomId}/e2e-key`, auth: () => ({ token: memberToken }), success: 200 },
};

const fieldVariants: Record<string, Variant[]> = {
  CreateRoom: [
    ...idVariants('id', false).filter(([label]) => label !== 'id null'),
    ['type missing', drop('type'), 'body.type'],
    ['type unknown', set('type', 'private'), 'body.type'],
    ['type a number', set('type', 1), 'body.type'],
    ['name a number', set('name', 42), 'body.name'],
    ['name empty', set('name', ''), 'body.name'],
    ['name blank', set('name', '  '), 'body.name'],
    ['name of 201 characters', set('name', long(201)), 'body.name'],
    ['description a number', set('description', 42), 'body.description'],
    ['description of 2001 characters', set('description', long(2001)), 'body.description'],
    ['members a string', set('members', 'bob'), 'body.members'],
    ['members with a number', set('members', ['bob', 42]), 'body.members.1'],
    ['members with a bad id', set('members', ['bob', 'a#b']), 'body.members.1'],
    [
      'members with 101 entries',
      set(
        'members',
        Array.from({ length: 101 }, (_, i) => `m${i}`),
      ),
      'body.members',
    ],
    ['e2eEnabled a string', set('e2eEnabled', 'yes'), 'body.e2eEnabled'],
  ],
  UpdateRoom: [
    ['no field at all', () => ({}), 'body'],
    ['name a number', set('name', 42), 'body.name'],
    ['name empty', set('name', ''), 'body.name'],
    ['name of 201 characters', set('name', long(201)), 'body.name'],
    ['description a number', set('description', 42), 'body.description'],
    ['description of 2001 characters', set('description', long(2001)), 'body.description'],
    ['e2eEnabled a string', set('e2eEnabled', 'true'), 'body.e2eEnabled'],
    ['e2eEnabled null', set('e2eEnabled', null), 'body.e2eEnabled'],
    ['allowMemberPins a string', set('allowMemberPins', 'true'), 'body.allowMemberPins'],
    ['allowMemberPins null', set('allowMemberPins', null), 'body.allowMemberPins'],
  ],
  AddRoomMember: [
    ...idVariants('userId', true),
    ['role owner', set('role', 'owner'), 'body.role'],
    ['role admin', set('role', 'admin'), 'body.role'],
    ['role a number', set('role', 1), 'body.role'],
  ],
};

describeValidationMatrix('Rooms', requests, fieldVariants);

describe('query parameters', () => {
  it.each([
    { path: '/rooms?scope=all', field: 'query.scope' },
    { path: '/rooms?limit=0', field: 'query.limit' },
    { path: '/rooms?limit=101', field: 'query.limit' },
    { path: '/rooms?limit=lots', field: 'query.limit' },
    { path: '/rooms?cursor=a%23b', field: 'query.cursor' },
    { path: `/rooms?cursor=${long(129)}`, field: 'query.cursor' },
  ])('GET $path → 400 naming $field', async ({ path, field }) => {
    // Act
    const response = await api(path, { token: memberToken });

    // Assess
    expectInvalid(response, field);
  });
});

describe('path parameters', () => {
  it('answers 400, not a gateway error, to a malformed percent-encoding in the path', async () => {
    // Act
    const response = await api('/rooms/%E0%A4%A', { token: adminToken });

    // Assess
    expect(response.status).toBe(400);
  });
});
