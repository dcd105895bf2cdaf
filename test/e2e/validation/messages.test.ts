import { beforeAll, describe, expect, it } from 'vitest';
import { api, type TestProject, uniqueId } from '../../support/api';
import {
  type Body,
  createValidationProject,
  describeValidationMatrix,
  drop,
  expectInvalid,
  future,
  idVariants,
  long,
  type RouteRequests,
  set,
  textVariants,
  type Variant,
} from '../../support/matrices/validation-driver';

/** Bad input to the Messages area's routes (messages, imports, moderation); the checks are the matrix's (`validation-driver.ts`). */

let project: TestProject;
let adminToken: string;
let memberToken: string;
let roomId: string;
/** The member's messages: one to edit, react to and report; one to pin (reported before, for the moderators' routes); one to delete. */
let edited: number;
let pinned: number;
let deleted: number;
let reportId: string;

beforeAll(async () => {
  ({ project, adminToken, memberToken, roomId } = await createValidationProject('validation-messages'));
  const send = async () => (await api('/messages', { token: memberToken, body: { roomId, content: 'lifecycle' } })).body.id as number;
  [edited, pinned, deleted] = [await send(), await send(), await send()];
  reportId = (await api(`/messages/${pinned}/reports`, { token: memberToken, body: { roomId, reason: 'spam' } })).body.id;
});

const thumb = encodeURIComponent('👍');

/** How to make a request each route of the area accepts. */
const requests: RouteRequests = {
  CreateMessage: {
    path: () => '/messages',
    auth: () => ({ token: adminToken }),
    body: () => ({
      roomId,
      content: 'valid',
      parent_id: null,
      attachments: ['https://example.com/a.png'],
      clientMessageId: uniqueId('c'),
      userId: 'someone',
      createdAt: '2022-02-02T02:02:02.000Z',
    }),
    success: 201,
    roomInBody: true,
  },
  ListRoomMessages: { path: () => `/rooms/${roomId}/messages`, auth: () => ({ token: adminToken }), success: 200 },
  PostRoomMessage: {
    path: () => `/rooms/${roomId}/messages`,
    auth: () => ({ token: adminToken }),
    body: () => ({
      content: 'valid',
      parent_id: null,
      attachments: ['https://example.com/a.png'],
      clientMessageId: uniqueId('c'),
      userId: 'someone',
      createdAt: '2022-02-02T02:02:02.000Z',
    }),
    success: 201,
  },
  ImportMessage: {
    path: () => '/admin/messages/import',
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ roomId, userId: 'legacy', content: 'valid', createdAt: '2021-01-01T00:00:00Z', clientMessageId: uniqueId('c') }),
    success: 201,
    roomInBody: true,
  },
  ImportMessageBatch: {
    path: () => '/admin/messages/import/batch',
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ messages: [{ roomId, userId: 'legacy', content: 'valid', createdAt: '2021-01-01T00:00:00Z' }] }),
    success: 200,
    roomInBody: true,
  },
  GetBlockList: { path: () => '/admin/moderation/blocklist', auth: () => ({ apiKey: project.apiKey }), success: 200 },
  ReplaceBlockList: {
    path: () => '/admin/moderation/blocklist',
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ terms: ['valid-term'] }),
    success: 200,
  },
  ListModerationFlags: { path: () => '/admin/moderation/flags', auth: () => ({ apiKey: project.apiKey }), success: 200 },
  EditMessage: {
    path: () => `/messages/${edited}`,
    auth: () => ({ token: memberToken }),
    body: () => ({ roomId, content: 'edited' }),
    success: 200,
    roomInBody: true,
  },
  DeleteMessage: { path: () => `/messages/${deleted}?roomId=${roomId}`, auth: () => ({ token: adminToken }), success: 204 },
  AddReaction: {
    path: () => `/messages/${edited}/reactions/${thumb}?roomId=${roomId}`,
    auth: () => ({ token: memberToken }),
    success: 201,
  },
  RemoveReaction: {
    path: () => `/messages/${edited}/reactions/${thumb}?roomId=${roomId}`,
    auth: () => ({ token: memberToken }),
    success: 204,
  },
  ListPins: { path: () => `/rooms/${roomId}/pins`, auth: () => ({ token: memberToken }), success: 200 },
  PinMessage: { path: () => `/rooms/${roomId}/pins/${pinned}`, auth: () => ({ token: adminToken }), success: 201 },
  UnpinMessage: { path: () => `/rooms/${roomId}/pins/${pinned}`, auth: () => ({ token: adminToken }), success: 204 },
  ReportMessage: {
    path: () => `/messages/${edited}/reports`,
    auth: () => ({ token: memberToken }),
    body: () => ({ roomId, reason: 'harassment', note: 'valid' }),
    success: 201,
    roomInBody: true,
  },
  ListReports: { path: () => '/admin/moderation/reports?status=open&limit=10', auth: () => ({ token: adminToken }), success: 200 },
  DecideReport: {
    path: () => `/admin/moderation/reports/${reportId}`,
    auth: () => ({ token: adminToken }),
    body: () => ({ status: 'dismissed', note: 'valid' }),
    success: 200,
  },
};

const messageVariants = (withRoom: boolean): Variant[] => [
  ...(withRoom ? idVariants('roomId', true) : []),
  ['content missing', drop('content'), 'body.content'],
  ['content a number', set('content', 42), 'body.content'],
  ['content null', set('content', null), 'body.content'],
  ['content empty', set('content', ''), 'body.content'],
  ['content of 4001 characters', set('content', long(4001)), 'body.content'],
  ['parent_id a string', set('parent_id', '1'), 'body.parent_id'],
  ['parent_id zero', set('parent_id', 0), 'body.parent_id'],
  ['parent_id negative', set('parent_id', -1), 'body.parent_id'],
  ['parent_id fractional', set('parent_id', 1.5), 'body.parent_id'],
  ['attachments a string', set('attachments', 'https://example.com/a.png'), 'body.attachments'],
  ['attachments with a number', set('attachments', [42]), 'body.attachments.0'],
  ['attachments with an ftp URL', set('attachments', ['https://example.com/ok', 'ftp://x']), 'body.attachments.1'],
  ['attachments with a javascript: URL', set('attachments', ['javascript:alert(1)']), 'body.attachments.0'],
  ['attachments with a URL of 2049 characters', set('attachments', [`https://e.com/${long(2035)}`]), 'body.attachments.0'],
  [
    '11 attachments',
    set(
      'attachments',
      Array.from({ length: 11 }, (_, i) => `https://e.com/${i}`),
    ),
    'body.attachments',
  ],
  ['clientMessageId a number', set('clientMessageId', 7), 'body.clientMessageId'],
  ['clientMessageId empty', set('clientMessageId', ''), 'body.clientMessageId'],
  ['clientMessageId of 129 characters', set('clientMessageId', long(129)), 'body.clientMessageId'],
  ['userId a number', set('userId', 42), 'body.userId'],
  ['userId with a space', set('userId', 'a b'), 'body.userId'],
  ['userId of 129 characters', set('userId', long(129)), 'body.userId'],
  ['createdAt a number', set('createdAt', 1_700_000_000_000), 'body.createdAt'],
  ['createdAt not a timestamp', set('createdAt', 'last tuesday'), 'body.createdAt'],
  ['createdAt before 2000', set('createdAt', '1999-12-31T23:59:59Z'), 'body.createdAt'],
  ['createdAt in the future', (body) => ({ ...body, createdAt: future() }), 'body.createdAt'],
];

const fieldVariants: Record<string, Variant[]> = {
  CreateMessage: messageVariants(true),
  PostRoomMessage: [...messageVariants(false), ['roomId in the body', set('roomId', 'elsewhere'), 'body']],
  ImportMessage: [...messageVariants(true).filter(([label]) => label !== 'userId a number'), ...idVariants('userId', true)],
  ImportMessageBatch: [
    ['messages missing', drop('messages'), 'body.messages'],
    ['messages an object', set('messages', { roomId: 'r' }), 'body.messages'],
    ['messages empty', set('messages', []), 'body.messages'],
    ['messages with 101 rows', (body) => ({ messages: Array.from({ length: 101 }, () => (body.messages as Body[])[0]) }), 'body.messages'],
    ['a row that is a string', set('messages', ['row']), 'body.messages.0'],
    ...messageVariants(true).map(
      ([label, change, field]): Variant => [
        `a row with ${label}`,
        (body) => ({ messages: [(body.messages as Body[])[0], change((body.messages as Body[])[0] as Body)] }),
        field.replace(/^body/, 'body.messages.1'),
      ],
    ),
    ['a row without userId', (body) => ({ messages: [drop('userId')((body.messages as Body[])[0] as Body)] }), 'body.messages.0.userId'],
    ['a row with an unknown field', (body) => ({ messages: [{ ...(body.messages as Body[])[0], extra: 1 }] }), 'body.messages.0'],
  ],
  ReplaceBlockList: [
    ['terms missing', drop('terms'), 'body.terms'],
    ['terms a string', set('terms', 'spam'), 'body.terms'],
    ['terms with a number', set('terms', [1]), 'body.terms.0'],
    ['terms with an empty term', set('terms', ['']), 'body.terms.0'],
    ['terms with a term of 201 characters', set('terms', [long(201)]), 'body.terms.0'],
    [
      'terms with 1001 entries',
      set(
        'terms',
        Array.from({ length: 1001 }, (_, i) => `t${i}`),
      ),
      'body.terms',
    ],
  ],
};

fieldVariants.EditMessage = [
  ...idVariants('roomId', true),
  ...textVariants('content', { required: true, max: 4000 }),
  ['content with a parent_id', set('parent_id', 1), 'body'],
];
fieldVariants.ReportMessage = [
  ...idVariants('roomId', true),
  ['reason missing', drop('reason'), 'body.reason'],
  ['reason not one of the reasons', set('reason', 'boring'), 'body.reason'],
  ['reason a number', set('reason', 1), 'body.reason'],
  ...textVariants('note', { max: 1000 }),
  ['note of spaces only', set('note', '   '), 'body.note'],
];
fieldVariants.DecideReport = [
  ['status missing', drop('status'), 'body.status'],
  ['status open (a report does not reopen)', set('status', 'open'), 'body.status'],
  ['status a number', set('status', 1), 'body.status'],
  ...textVariants('note', { max: 1000 }),
];

describeValidationMatrix('Messages', requests, fieldVariants);

describe('lifecycle query parameters and emoji', () => {
  it.each([
    { name: 'DELETE without roomId', path: () => `/messages/${deleted}`, method: 'DELETE', field: 'query.roomId' },
    { name: 'DELETE with a bad roomId', path: () => `/messages/${deleted}?roomId=a%23b`, method: 'DELETE', field: 'query.roomId' },
    { name: 'PUT reaction without roomId', path: () => `/messages/${edited}/reactions/${thumb}`, method: 'PUT', field: 'query.roomId' },
    {
      name: 'reaction of two emoji',
      path: () => `/messages/${edited}/reactions/${encodeURIComponent('👍👍')}?roomId=${roomId}`,
      method: 'PUT',
      field: 'path.emoji',
    },
    { name: 'reaction of letters', path: () => `/messages/${edited}/reactions/abc?roomId=${roomId}`, method: 'PUT', field: 'path.emoji' },
    {
      name: 'reaction of an emoji and text',
      path: () => `/messages/${edited}/reactions/${encodeURIComponent('👍a')}?roomId=${roomId}`,
      method: 'DELETE',
      field: 'path.emoji',
    },
    {
      name: 'reaction shortcode in upper case',
      path: () => `/messages/${edited}/reactions/${encodeURIComponent(':Fire:')}?roomId=${roomId}`,
      method: 'PUT',
      field: 'path.emoji',
    },
    { name: 'reports of an unknown status', path: () => '/admin/moderation/reports?status=closed', method: 'GET', field: 'query.status' },
    { name: 'reports limit 0', path: () => '/admin/moderation/reports?limit=0', method: 'GET', field: 'query.limit' },
    { name: 'reports limit 101', path: () => '/admin/moderation/reports?limit=101', method: 'GET', field: 'query.limit' },
  ])('$name → 400 naming $field', async ({ path, method, field }) => {
    // Act
    const response = await api(path(), { method, token: adminToken });

    // Assess
    expectInvalid(response, field);
  });

  it.each(['👍🏽', '👨‍👩‍👧', '🇫🇷', '❤️', '#️⃣', ':party_parrot:', ':+1:'])('accepts the emoji %s', async (emoji) => {
    // Act
    const response = await api(`/messages/${edited}/reactions/${encodeURIComponent(emoji)}?roomId=${roomId}`, {
      method: 'PUT',
      token: memberToken,
    });

    // Assess
    expect({ status: response.status, emoji: response.body.emoji }).toEqual({ status: 201, emoji });
  });
});

describe('query parameters', () => {
  it.each([
    { query: 'limit=0', field: 'query.limit' },
    { query: 'limit=101', field: 'query.limit' },
    { query: 'before=x', field: 'query.before' },
    { query: 'after=-1', field: 'query.after' },
    { query: 'before=5&after=1', field: 'query' },
  ])('GET /rooms/{roomId}/messages?$query → 400 naming $field', async ({ query, field }) => {
    // Act
    const response = await api(`/rooms/${roomId}/messages?${query}`, { token: adminToken });

    // Assess
    expectInvalid(response, field);
  });

  it.each(['0', '101', '1.5'])('GET /admin/moderation/flags?limit=%s → 400 naming query.limit', async (limit) => {
    // Act
    const response = await api(`/admin/moderation/flags?limit=${limit}`, { apiKey: project.apiKey });

    // Assess
    expectInvalid(response, 'query.limit');
  });
});

describe('plain wording', () => {
  it('names the key meant by an unknown one, and says what a field must be', async () => {
    // Act
    const misspelt = await api('/messages', { token: adminToken, body: { roomId, content: 'hi', parentId: 1 } });
    const missing = await api('/messages', { token: adminToken, body: { roomId } });
    const tooLong = await api('/messages', { token: adminToken, body: { roomId, content: long(4001) } });
    const fraction = await api(`/rooms/${roomId}/messages?limit=1.5`, { token: adminToken });

    // Assess
    expect(misspelt.body.error).toEqual({
      code: 'validation_failed',
      message: 'Invalid request: body: unknown field `parentId` (did you mean `parent_id`?)',
      details: [{ field: 'body', message: 'unknown field `parentId` (did you mean `parent_id`?)' }],
      traceId: expect.any(String),
    });
    expect(missing.body.error.details).toEqual([{ field: 'body.content', message: 'is required (a string)' }]);
    expect(tooLong.body.error.details).toEqual([{ field: 'body.content', message: 'must be at most 4000 characters' }]);
    expect(fraction.body.error.details).toEqual([{ field: 'query.limit', message: 'must be an integer' }]);
  });
});
