import { describe, expect, it } from 'vitest';
import { parseClientUrl, parseHttpUrl } from '#shared/urls';

/** Every URL a client gives (attachments, webhook targets) is taken only if it is one after parsing. */
describe('parseHttpUrl', () => {
  it.each([
    'https://cdn.example.com/a.png',
    'http://example.org/b.pdf?x=1#frag',
    'https://example.com/caf%C3%A9',
    'https://example.com/café',
    'https://example.com/😀',
  ])('takes %j', (value) => {
    expect(parseHttpUrl(value)?.protocol).toMatch(/^https?:$/);
  });

  it.each([
    { name: 'NUL', value: 'https://cdn.example.com/a\u0000b' },
    { name: 'a lone high surrogate', value: 'https://cdn.example.com/a\ud800b' },
    { name: 'a lone low surrogate', value: 'https://cdn.example.com/a\udc00' },
    { name: 'a tab', value: 'https://cdn.example.com/a\tb' },
    { name: 'a line feed', value: 'https://cdn.example.com/a\nb' },
    { name: 'DEL', value: 'https://cdn.example.com/a\u007fb' },
    { name: 'a C1 control', value: 'https://cdn.example.com/a\u0085b' },
    { name: 'a space', value: 'https://cdn.example.com/a b' },
    { name: 'a leading space', value: ' https://cdn.example.com/a' },
    { name: 'a no-break space', value: 'https://cdn.example.com/a\u00a0b' },
    { name: 'a right-to-left override', value: 'https://cdn.example.com/\u202egnp.exe' },
    { name: 'a byte order mark', value: '\ufeffhttps://cdn.example.com/a' },
    { name: 'another scheme', value: 'ftp://cdn.example.com/a' },
    { name: 'a relative path', value: '/uploads/a.png' },
  ])('refuses a URL holding $name', ({ value }) => {
    expect(parseHttpUrl(value)).toBeUndefined();
  });

  it('leaves the scheme to the caller in parseClientUrl', () => {
    expect(parseClientUrl('ftp://files.example.com/a')?.protocol).toBe('ftp:');
    expect(parseClientUrl('ftp://files.example.com/a\u0000')).toBeUndefined();
  });
});
