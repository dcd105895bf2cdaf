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
  type Variant,
} from '../../support/matrices/validation-driver';

/** Bad input to the Messages area's routes (messages, imports, moderation); the checks are the matrix's (`validation-driver.ts`). */

let project: TestProject;
let adminToken: string;
let roomId: string;

beforeAll(async () => {
  ({ project, adminToken, roomId } = await createValidationProject('validation-messages'));
});

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

describeValidationMatrix('Messages', requests, fieldVariants);

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
    });
    expect(missing.body.error.details).toEqual([{ field: 'body.content', message: 'is required (a string)' }]);
    expect(tooLong.body.error.details).toEqual([{ field: 'body.content', message: 'must be at most 4000 characters' }]);
    expect(fraction.body.error.details).toEqual([{ field: 'query.limit', message: 'must be an integer' }]);
  });
});
