import { describe, expect, it } from 'vitest';
import { ChatError, classify, errorFromBody, parseRetryAfter } from '../../sdk/errors';

describe('errors read from the service', () => {
  it('carry the code, message, status, details and trace id of the error body', () => {
    // Act
    const error = errorFromBody(
      { error: { code: 'validation_failed', message: 'Invalid', details: [{ field: 'body.content' }], traceId: 'trace-1' } },
      400,
    );

    // Assess
    expect(error).toBeInstanceOf(ChatError);
    expect(error).toMatchObject({
      code: 'validation_failed',
      message: 'Invalid',
      status: 400,
      details: [{ field: 'body.content' }],
      traceId: 'trace-1',
    });
  });

  it.each([
    { variant: 'the Retry-After header', header: '7', details: { retryAfterSeconds: 3 }, retryAfter: 7 },
    { variant: 'details.retryAfterSeconds', header: null, details: { retryAfterSeconds: 3 }, retryAfter: 3 },
    { variant: 'neither', header: null, details: undefined, retryAfter: undefined },
  ])('take retryAfter from $variant', ({ header, details, retryAfter }) => {
    // Act
    const error = errorFromBody({ error: { code: 'rate_limited', message: 'Slow down', details } }, 429, header);

    // Assess
    expect(error.retryAfter).toBe(retryAfter);
  });

  it.each([
    { variant: 'delay-seconds', header: '7', retryAfter: 7 },
    { variant: 'delay-seconds with spaces', header: ' 30 ', retryAfter: 30 },
    { variant: 'an HTTP date 12.5 s ahead (rounded up)', header: 'Wed, 21 Oct 2026 07:28:12 GMT', retryAfter: 13 },
    { variant: 'an HTTP date in the past', header: 'Wed, 21 Oct 2026 07:27:00 GMT', retryAfter: 0 },
    { variant: 'a negative number', header: '-1', retryAfter: undefined },
    { variant: 'garbage', header: 'soon', retryAfter: undefined },
    { variant: 'an empty header', header: '', retryAfter: undefined },
    { variant: 'no header', header: null, retryAfter: undefined },
  ])('read a Retry-After of $variant', ({ header, retryAfter }) => {
    expect(parseRetryAfter(header, Date.parse('2026-10-21T07:27:59.500Z'))).toBe(retryAfter);
  });

  it('name an answer without an error body by its status', () => {
    // Act
    const error = errorFromBody('<html>Bad gateway</html>', 503);

    // Assess
    expect(error).toMatchObject({ code: 'http_503', status: 503 });
  });
});

describe('the reaction to a failed attempt', () => {
  it.each([
    { status: 400, code: 'validation_failed', kind: 'fatal' },
    { status: 401, code: 'token_expired', kind: 'fatal' },
    { status: 403, code: 'not_a_member', kind: 'fatal' },
    { status: 404, code: 'room_not_found', kind: 'fatal' },
    { status: 404, code: 'not_found', kind: 'transient' },
    { status: 429, code: 'rate_limited', kind: 'rate_limited' },
    { status: 500, code: 'internal_error', kind: 'transient' },
    { status: 502, code: 'bad_gateway', kind: 'transient' },
    { status: 503, code: 'http_503', kind: 'transient' },
    { status: undefined, code: 'network_error', kind: 'transient' },
  ])('is $kind for $status $code', ({ status, code, kind }) => {
    expect(classify(new ChatError(code, code, status === undefined ? {} : { status }))).toBe(kind);
  });
});
