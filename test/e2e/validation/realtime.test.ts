import { beforeAll, describe, it } from 'vitest';
import { type TestProject, uniqueId } from '../../support/api';
import {
  createValidationProject,
  describeValidationMatrix,
  drop,
  expectInvalid,
  idVariants,
  long,
  type RouteRequests,
  sender,
  set,
  type Variant,
} from '../../support/matrices/validation-driver';

/** Bad input to the Realtime area's routes (the SSE stream, events, watchlists); the checks are the matrix's (`validation-driver.ts`). */

let project: TestProject;
let memberToken: string;
let memberId: string;
let roomId: string;

beforeAll(async () => {
  ({ project, memberToken, memberId, roomId } = await createValidationProject('validation-realtime'));
});

/** How to make a request each route of the area accepts. */
const requests: RouteRequests = {
  StreamRoom: { path: () => `/rooms/${roomId}/stream`, auth: () => ({ token: memberToken }), success: 200 },
  PublishEvents: {
    path: () => '/events',
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ roomIds: [roomId], name: 'valid.event:1', data: { k: 1 }, excludeSocketId: 'socket-1' }),
    success: 202,
  },
  PublishUserEvent: {
    path: () => `/users/${memberId}/events`,
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ name: 'valid_event', data: { k: 1 } }),
    success: 202,
  },
  CloseUserConnections: { path: () => `/users/${uniqueId('user')}/connections`, auth: () => ({ apiKey: project.apiKey }), success: 200 },
  ListWatchlist: { path: () => `/users/${memberId}/watchlist`, auth: () => ({ apiKey: project.apiKey }), success: 200 },
  AddWatchlistTarget: {
    path: () => `/users/${memberId}/watchlist`,
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ type: 'user', targetId: uniqueId('watched') }),
    success: 201,
  },
  RemoveWatchlistTarget: {
    path: () => `/users/${memberId}/watchlist`,
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ type: 'user', targetId: uniqueId('watched') }),
    success: 204,
  },
};

/** Event names: 1-64 of [A-Za-z0-9_.:-], never client-; data: a JSON object of at most 10 KB. */
const eventVariants = (): Variant[] => [
  ['name missing', drop('name'), 'body.name'],
  ['name a number', set('name', 42), 'body.name'],
  ['name empty', set('name', ''), 'body.name'],
  ['name of 65 characters', set('name', long(65)), 'body.name'],
  ['name with a space', set('name', 'a b'), 'body.name'],
  ['name with a slash', set('name', 'a/b'), 'body.name'],
  ['name starting with client-', set('name', 'client-typing'), 'body.name'],
  ['data an array', set('data', [1]), 'body.data'],
  ['data a string', set('data', 'text'), 'body.data'],
  ['data null', set('data', null), 'body.data'],
  ['data over 10 KB', set('data', { blob: long(10 * 1024) }), 'body.data'],
];

const watchTargetVariants = (): Variant[] => [
  ['type missing', drop('type'), 'body.type'],
  ['type unknown', set('type', 'channel'), 'body.type'],
  ['type a number', set('type', 1), 'body.type'],
  ...idVariants('targetId', true),
];

const fieldVariants: Record<string, Variant[]> = {
  PublishEvents: [
    ['roomIds missing', drop('roomIds'), 'body.roomIds'],
    ['roomIds a string', set('roomIds', 'room'), 'body.roomIds'],
    ['roomIds empty', set('roomIds', []), 'body.roomIds'],
    [
      'roomIds with 11 entries',
      set(
        'roomIds',
        Array.from({ length: 11 }, (_, i) => `r${i}`),
      ),
      'body.roomIds',
    ],
    ['roomIds with a number', set('roomIds', ['ok', 42]), 'body.roomIds.1'],
    ['roomIds with a bad id', set('roomIds', ['a#b']), 'body.roomIds.0'],
    ['roomIds with an id of 129 characters', set('roomIds', [long(129)]), 'body.roomIds.0'],
    ...eventVariants(),
    ['excludeSocketId a number', set('excludeSocketId', 7), 'body.excludeSocketId'],
    ['excludeSocketId empty', set('excludeSocketId', ''), 'body.excludeSocketId'],
    ['excludeSocketId of 129 characters', set('excludeSocketId', long(129)), 'body.excludeSocketId'],
    ['socket_id a number', set('socket_id', 7), 'body.socket_id'],
    ['socket_id empty', set('socket_id', ''), 'body.socket_id'],
  ],
  PublishUserEvent: eventVariants(),
  AddWatchlistTarget: watchTargetVariants(),
  RemoveWatchlistTarget: watchTargetVariants(),
};

describeValidationMatrix('Realtime', requests, fieldVariants);

const send = sender(requests);

describe('the SSE stream resume point', () => {
  it.each([
    {
      variant: 'a Last-Event-ID header that is not a message id',
      query: '',
      headers: { 'last-event-id': 'abc' },
      field: 'header.last-event-id',
    },
    { variant: 'a negative Last-Event-ID header', query: '', headers: { 'last-event-id': '-5' }, field: 'header.last-event-id' },
    {
      variant: 'a lastEventId query that is not a message id',
      query: '?lastEventId=abc',
      headers: {} as Record<string, string>,
      field: 'query.lastEventId',
    },
  ])('answers 400 naming $field to $variant', async ({ query, headers, field }) => {
    // Act
    const response = await send('StreamRoom', { path: `/rooms/${roomId}/stream${query}`, headers });

    // Assess
    expectInvalid(response, field);
  });
});
