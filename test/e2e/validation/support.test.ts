import { beforeAll, describe, it } from 'vitest';
import { api } from '../../support/api';
import {
  createValidationProject,
  describeValidationMatrix,
  drop,
  expectInvalid,
  idVariants,
  long,
  type RouteRequests,
  set,
  textVariants,
  type ValidationProject,
  type Variant,
} from '../../support/matrices/validation-driver';

/** Bad input to the support desk's routes; the checks common to every route are the matrix's (`validation-driver.ts`). */

let fixture: ValidationProject;
let responseId: string;
let doomedResponseId: string;
let ticketId: string;
let surveyId: string;

beforeAll(async () => {
  fixture = await createValidationProject('validation-support');
  const { project, memberToken, roomId } = fixture;
  const create = (title: string) => api('/admin/support/canned-responses', { apiKey: project.apiKey, body: { title, content: 'x' } });
  responseId = (await create('kept')).body.responseId;
  doomedResponseId = (await create('deleted by the control')).body.responseId;
  // A solved ticket leaves the member a survey; the room's next ticket is the one the control updates.
  const solved = (await api('/support/tickets/from-room', { token: memberToken, body: { roomId } })).body.ticket.ticketId;
  await api(`/support/tickets/${solved}`, { apiKey: project.apiKey, method: 'PATCH', body: { status: 'solved' } });
  surveyId = (await api(`/support/csat/pending?roomId=${roomId}`, { token: memberToken })).body.surveys[0].surveyId;
  ticketId = (await api('/support/tickets/from-room', { token: memberToken, body: { roomId } })).body.ticket.ticketId;
});

const admin = () => ({ token: fixture.adminToken });
const member = () => ({ token: fixture.memberToken });

const requests: RouteRequests = {
  ListCannedResponses: { path: () => '/support/canned-responses', auth: member, success: 200 },
  CreateCannedResponse: {
    path: () => '/admin/support/canned-responses',
    auth: admin,
    body: () => ({ title: 'Welcome', content: 'Hello there', tags: ['intro'] }),
    success: 201,
  },
  UpdateCannedResponse: {
    path: () => `/admin/support/canned-responses/${responseId}`,
    auth: admin,
    body: () => ({ title: 'Renamed', shortcut: 'renamed' }),
    success: 200,
  },
  DeleteCannedResponse: { path: () => `/admin/support/canned-responses/${doomedResponseId}`, auth: admin, success: 204 },
  GetBusinessHours: { path: () => '/support/business-hours', auth: member, success: 200 },
  PutBusinessHours: {
    path: () => '/admin/support/business-hours',
    auth: admin,
    body: () => ({ timezone: 'Europe/Berlin', weekly: { monday: [{ open: '09:00', close: '17:00' }] }, holidays: ['2030-12-25'] }),
    success: 200,
  },
  CreateTicketFromRoom: {
    path: () => '/support/tickets/from-room',
    auth: member,
    body: () => ({ roomId: fixture.roomId, subject: 'Help', priority: 'low' }),
    // The room's active ticket is the answer once one is open.
    success: 200,
    roomInBody: true,
  },
  ListTickets: { path: () => '/support/tickets?status=open&limit=10', auth: admin, success: 200 },
  UpdateTicket: { path: () => `/support/tickets/${ticketId}`, auth: admin, body: () => ({ priority: 'urgent' }), success: 200 },
  ListPendingCsat: { path: () => `/support/csat/pending?roomId=${fixture.roomId}`, auth: member, success: 200 },
  AnswerCsat: { path: () => `/support/csat/${surveyId}`, auth: member, body: () => ({ score: 4, comment: 'Good' }), success: 200 },
};

const shortcutVariants: Variant[] = [
  ['shortcut with upper case', set('shortcut', 'Hello'), 'body.shortcut'],
  ['shortcut with a space', set('shortcut', 'a b'), 'body.shortcut'],
  ['shortcut of 33 characters', set('shortcut', long(33)), 'body.shortcut'],
  ['shortcut a number', set('shortcut', 7), 'body.shortcut'],
];
const tagVariants: Variant[] = [
  ['tags not an array', set('tags', 'intro'), 'body.tags'],
  [
    '11 tags',
    set(
      'tags',
      Array.from({ length: 11 }, (_, index) => `t${index}`),
    ),
    'body.tags',
  ],
  ['a tag of 33 characters', set('tags', [long(33)]), 'body.tags.0'],
  ['an empty tag', set('tags', ['']), 'body.tags.0'],
];
const range = (open: unknown, close: unknown) => (body: Record<string, unknown>) => ({ ...body, weekly: { monday: [{ open, close }] } });

const fieldVariants: Record<string, Variant[]> = {
  CreateCannedResponse: [
    ...textVariants('title', { required: true, max: 120 }),
    ...textVariants('content', { required: true, max: 2000 }),
    ...shortcutVariants,
    ...tagVariants,
  ],
  UpdateCannedResponse: [
    ['nothing to change', () => ({}), 'body'],
    ...textVariants('title', { max: 120 }),
    ...textVariants('content', { max: 2000 }),
    ...shortcutVariants,
    ...tagVariants,
  ],
  PutBusinessHours: [
    ['timezone missing', drop('timezone'), 'body.timezone'],
    ['timezone unknown', set('timezone', 'Europe/Atlantis'), 'body.timezone'],
    ['timezone an offset', set('timezone', '+02:00'), 'body.timezone'],
    ['timezone a number', set('timezone', 2), 'body.timezone'],
    ['weekly missing', drop('weekly'), 'body.weekly'],
    ['weekly an unknown day', set('weekly', { someday: [] }), 'body.weekly'],
    ['a day not a list', set('weekly', { monday: { open: '09:00', close: '17:00' } }), 'body.weekly.monday'],
    ['open 25:00', range('25:00', '26:00'), 'body.weekly.monday.0.open'],
    ['open 9:00', range('9:00', '17:00'), 'body.weekly.monday.0.open'],
    ['close before open', range('17:00', '09:00'), 'body.weekly.monday.0.close'],
    ['close equal to open', range('09:00', '09:00'), 'body.weekly.monday.0.close'],
    [
      'a range with an extra field',
      (body) => ({ ...body, weekly: { monday: [{ open: '09:00', close: '10:00', note: 'x' }] } }),
      'body.weekly.monday.0',
    ],
    [
      '7 ranges in a day',
      (body) => ({ ...body, weekly: { monday: Array.from({ length: 7 }, (_, h) => ({ open: `1${h}:00`, close: `1${h}:30` })) } }),
      'body.weekly.monday',
    ],
    ['holidays not a list', set('holidays', '2030-12-25'), 'body.holidays'],
    ['a holiday not a date', set('holidays', ['25.12.2030']), 'body.holidays.0'],
    ['a holiday that does not exist', set('holidays', ['2030-02-30']), 'body.holidays.0'],
    [
      '201 holidays',
      set(
        'holidays',
        Array.from({ length: 201 }, () => '2030-12-25'),
      ),
      'body.holidays',
    ],
  ],
  CreateTicketFromRoom: [
    ...idVariants('roomId', true),
    ...textVariants('subject', { max: 200 }),
    ['priority unknown', set('priority', 'critical'), 'body.priority'],
    ['priority a number', set('priority', 1), 'body.priority'],
  ],
  UpdateTicket: [
    ['nothing to change', () => ({}), 'body'],
    ['status unknown', set('status', 'done'), 'body.status'],
    ['status null', set('status', null), 'body.status'],
    ['priority unknown', set('priority', 'critical'), 'body.priority'],
    ['assigneeId a number', set('assigneeId', 5), 'body.assigneeId'],
    ['assigneeId with #', set('assigneeId', 'a#b'), 'body.assigneeId'],
    ['assigneeId empty', set('assigneeId', ''), 'body.assigneeId'],
  ],
  AnswerCsat: [
    ['score missing', drop('score'), 'body.score'],
    ['score 0', set('score', 0), 'body.score'],
    ['score 6', set('score', 6), 'body.score'],
    ['score 4.5', set('score', 4.5), 'body.score'],
    ['score a string', set('score', '5'), 'body.score'],
    ...textVariants('comment', { max: 1000 }),
  ],
};

describeValidationMatrix('Support', requests, fieldVariants);

describe('query parameters', () => {
  it.each([
    ['/support/tickets?status=done', 'query.status'],
    ['/support/tickets?limit=0', 'query.limit'],
    ['/support/tickets?limit=101', 'query.limit'],
    ['/support/tickets?assigneeId=a%23b', 'query.assigneeId'],
    ['/support/tickets?cursor=nope', 'query.cursor'],
    ['/support/tickets?extra=1', 'query'],
  ])('%s → 400 naming %s', async (path, field) => {
    // Act
    const response = await api(path, admin());

    // Assess
    expectInvalid(response, field);
  });

  it.each([
    ['/support/csat/pending', 'query.roomId'],
    ['/support/csat/pending?roomId=', 'query.roomId'],
    ['/support/csat/pending?roomId=a%20b', 'query.roomId'],
  ])('%s → 400 naming %s', async (path, field) => {
    // Act
    const response = await api(path, member());

    // Assess
    expectInvalid(response, field);
  });
});
