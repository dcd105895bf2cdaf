import { describe, expect, it } from 'vitest';
import { messageWithRoomSchema } from '#domain/messages/message-input';

const valid = { roomId: 'general', content: 'hi' };

describe('message input schema', () => {
  it.each([
    ['http URL', ['http://example.com/a.png']],
    ['https URL', ['https://cdn.example.com/x?y=1']],
    ['no attachments', []],
  ])('accepts %s', (_name, attachments) => {
    expect(messageWithRoomSchema.safeParse({ ...valid, attachments }).success).toBe(true);
  });

  it.each([
    ['ftp URL', 'ftp://example.com/file', 1],
    ['javascript URL', 'javascript:alert(1)', 1],
    ['relative path', '/attachments/x.png', 1],
    ['plain text', 'not a url', 0],
  ])('rejects an attachment that is a %s and names its index', (_name, bad, index) => {
    const attachments = index === 1 ? ['https://ok.example/a', bad] : [bad];
    const parsed = messageWithRoomSchema.safeParse({ ...valid, attachments });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['attachments', index]);
  });

  it.each([
    ['empty content', { content: '' }],
    ['oversize content', { content: 'x'.repeat(4001) }],
    ['non-integer parent_id', { parent_id: 1.5 }],
    ['roomId with #', { roomId: 'a#b' }],
    ['unknown field', { colour: 'red' }],
    ['createdAt not ISO', { createdAt: 'yesterday' }],
    ['createdAt before 2000', { createdAt: '1999-12-31T23:59:59Z' }],
    ['createdAt in the future', { createdAt: new Date(Date.now() + 3_600_000).toISOString() }],
    ['11 attachments', { attachments: Array.from({ length: 11 }, (_, i) => `https://x.example/${i}`) }],
  ])('rejects %s', (_name, patch) => {
    expect(messageWithRoomSchema.safeParse({ ...valid, ...patch }).success).toBe(false);
  });
});
