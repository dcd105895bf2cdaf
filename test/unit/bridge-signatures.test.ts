import { describe, expect, it } from 'vitest';
import { bridgeClientMessageId, bridgedUserId, cutText } from '#domain/bridges/inbound';
import { verifyDiscordRequest, verifyMatrixRequest, verifySlackRequest } from '#domain/bridges/inbound-signatures';
import { discordHeaders, discordKeyPair, slackHeaders, slackSignature, unixSeconds } from '../support/bridge-signers';

/**
 * The three inbound checks on their own: Slack's HMAC, Discord's Ed25519 and Matrix's hs_token,
 * each signed as its platform signs (test/support/bridge-signers.ts), then tampered with.
 */

const refusal = { statusCode: 401, code: 'invalid_bridge_signature' };
const bytes = (text: string) => Buffer.from(text);
const NOW_MS = 1_800_000_000_000;
const NOW = unixSeconds(NOW_MS);
const window = { nowMs: NOW_MS, maxAgeSeconds: 300 };

describe('verifySlackRequest', () => {
  const secret = 'slack-signing-secret-0123456789';
  const body = '{"type":"event_callback","event_id":"Ev1","event":{"text":"héllo"}}';

  it('accepts the body Slack signed, at the edges of the window', () => {
    for (const timestamp of [NOW, NOW - 300, NOW + 300]) {
      expect(() => verifySlackRequest(secret, slackHeaders(secret, body, timestamp), bytes(body), window)).not.toThrow();
    }
  });

  it('refuses a tampered body, a stale or future timestamp, another secret', () => {
    const cases = [
      { headers: slackHeaders(secret, body, NOW), body: body.replace('héllo', 'hello') },
      { headers: slackHeaders(secret, body, NOW), body: `${body} ` },
      { headers: slackHeaders(secret, body, NOW - 301), body },
      { headers: slackHeaders(secret, body, NOW + 301), body },
      { headers: slackHeaders('another-secret', body, NOW), body },
      // Signed at one time, presented as signed at another.
      { headers: { ...slackHeaders(secret, body, NOW - 10), 'x-slack-request-timestamp': String(NOW) }, body },
    ];
    for (const { headers, body: sent } of cases) {
      expect(() => verifySlackRequest(secret, headers, bytes(sent), window)).toThrow(expect.objectContaining(refusal));
    }
  });

  it('refuses missing and malformed headers', () => {
    const good = slackHeaders(secret, body, NOW);
    const variants: Record<string, string | undefined>[] = [
      {},
      { ...good, 'x-slack-signature': undefined },
      { ...good, 'x-slack-request-timestamp': undefined },
      { ...good, 'x-slack-signature': good['x-slack-signature']?.slice(3) },
      { ...good, 'x-slack-signature': `v1=${good['x-slack-signature']?.slice(3)}` },
      { ...good, 'x-slack-signature': `${good['x-slack-signature']}00` },
      { ...good, 'x-slack-signature': 'v0=zz' },
      { ...good, 'x-slack-request-timestamp': `${NOW}.5` },
      { ...good, 'x-slack-request-timestamp': '1e9' },
      { ...good, 'x-slack-request-timestamp': '' },
    ];
    for (const headers of variants) {
      expect(() => verifySlackRequest(secret, headers, bytes(body), window)).toThrow(expect.objectContaining(refusal));
    }
  });

  it('signs what Slack documents (its example secret, timestamp and body)', () => {
    // https://api.slack.com/authentication/verifying-requests-from-slack
    const example =
      'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
    const signature = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';

    expect(slackSignature('8f742231b10e8888abcd99yyyzzz85a5', 1531420618, example)).toBe(signature);
    expect(() =>
      verifySlackRequest(
        '8f742231b10e8888abcd99yyyzzz85a5',
        { 'x-slack-signature': signature, 'x-slack-request-timestamp': '1531420618' },
        bytes(example),
        { nowMs: 1531420618_000 },
      ),
    ).not.toThrow();
  });
});

describe('verifyDiscordRequest', () => {
  const application = discordKeyPair();
  const body = '{"id":"1","type":2,"data":{"options":[{"name":"message","type":3,"value":"héllo"}]}}';

  it('accepts what the application key signed, at the edges of the window', () => {
    for (const timestamp of [NOW, NOW - 300, NOW + 300]) {
      const headers = discordHeaders(application.privateKey, body, timestamp);
      expect(() => verifyDiscordRequest(application.publicKeyHex, headers, bytes(body), window)).not.toThrow();
      expect(() => verifyDiscordRequest(application.publicKeyHex.toUpperCase(), headers, bytes(body), window)).not.toThrow();
    }
  });

  it('refuses a tampered body, a stale or future timestamp, another key', () => {
    const other = discordKeyPair();
    const cases = [
      { key: application.publicKeyHex, headers: discordHeaders(application.privateKey, body, NOW), body: body.replace('héllo', 'hello') },
      { key: application.publicKeyHex, headers: discordHeaders(application.privateKey, body, NOW - 301), body },
      { key: application.publicKeyHex, headers: discordHeaders(application.privateKey, body, NOW + 301), body },
      { key: application.publicKeyHex, headers: discordHeaders(other.privateKey, body, NOW), body },
      { key: other.publicKeyHex, headers: discordHeaders(application.privateKey, body, NOW), body },
      {
        key: application.publicKeyHex,
        headers: { ...discordHeaders(application.privateKey, body, NOW - 10), 'x-signature-timestamp': String(NOW) },
        body,
      },
      // 32 bytes that are no key anyone holds (nor, for all-ones, a point of the curve).
      { key: 'f'.repeat(64), headers: discordHeaders(application.privateKey, body, NOW), body },
    ];
    for (const { key, headers, body: sent } of cases) {
      expect(() => verifyDiscordRequest(key, headers, bytes(sent), window)).toThrow(expect.objectContaining(refusal));
    }
  });

  it('refuses missing and malformed headers', () => {
    const good = discordHeaders(application.privateKey, body, NOW);
    const signature = good['x-signature-ed25519'] as string;
    const variants: Record<string, string | undefined>[] = [
      {},
      { ...good, 'x-signature-ed25519': undefined },
      { ...good, 'x-signature-timestamp': undefined },
      { ...good, 'x-signature-ed25519': signature.slice(2) },
      { ...good, 'x-signature-ed25519': `${signature}00` },
      { ...good, 'x-signature-ed25519': `zz${signature.slice(2)}` },
      { ...good, 'x-signature-timestamp': ` ${NOW}` },
      { ...good, 'x-signature-timestamp': 'now' },
    ];
    for (const headers of variants) {
      expect(() => verifyDiscordRequest(application.publicKeyHex, headers, bytes(body), window)).toThrow(expect.objectContaining(refusal));
    }
  });
});

describe('verifyMatrixRequest', () => {
  const hsToken = 'hs-token-0123456789abcdef';

  it('accepts the hs_token as a bearer header or as the legacy access_token query parameter', () => {
    expect(() => verifyMatrixRequest(hsToken, { authorization: `Bearer ${hsToken}` }, undefined)).not.toThrow();
    expect(() => verifyMatrixRequest(hsToken, { authorization: `bearer ${hsToken}` }, undefined)).not.toThrow();
    expect(() => verifyMatrixRequest(hsToken, {}, hsToken)).not.toThrow();
  });

  it('refuses a missing, wrong or malformed token, and a wrong header beside a right query', () => {
    const variants: [Record<string, string | undefined>, string | undefined][] = [
      [{}, undefined],
      [{}, ''],
      [{ authorization: `Bearer ${hsToken}x` }, undefined],
      [{ authorization: `Bearer ${hsToken.slice(1)}` }, undefined],
      [{ authorization: hsToken }, undefined],
      [{ authorization: `Basic ${hsToken}` }, undefined],
      [{ authorization: 'Bearer ' }, undefined],
      [{}, 'as-token-is-not-the-hs-token'],
      // The header is what a current homeserver sends; a query beside a wrong one does not rescue it.
      [{ authorization: 'Bearer wrong' }, hsToken],
    ];
    for (const [headers, query] of variants) {
      expect(() => verifyMatrixRequest(hsToken, headers, query)).toThrow(expect.objectContaining(refusal));
    }
  });
});

describe('bridged ids and text', () => {
  it('names platform users as the contract says, and digests what an id cannot hold', () => {
    expect(bridgedUserId('slack', 'T123', 'U456')).toBe('slack:T123:U456');
    expect(bridgedUserId('discord', 'dm', '80351110224678912')).toBe('discord:dm:80351110224678912');
    expect(bridgedUserId('matrix', '@alice:example.org')).toBe('matrix:@alice:example.org');
    expect(bridgedUserId('matrix', '@a=b/c:example.org')).toMatch(/^matrix:[0-9a-f]{32}$/);
    expect(bridgedUserId('matrix', `@${'a'.repeat(130)}:example.org`)).toMatch(/^matrix:[0-9a-f]{32}$/);
    expect(bridgedUserId('matrix', '@a=b/c:example.org')).not.toBe(bridgedUserId('matrix', '@a=b/d:example.org'));
  });

  it('keys a platform event per bridge', () => {
    const key = bridgeClientMessageId('br_p1_000000000000000000000001', 'Ev1');
    expect(key).toMatch(/^bridge:[0-9a-f]{40}$/);
    expect(bridgeClientMessageId('br_p1_000000000000000000000001', 'Ev1')).toBe(key);
    expect(bridgeClientMessageId('br_p1_000000000000000000000002', 'Ev1')).not.toBe(key);
  });

  it('cuts long text with an ellipsis within the limit, never halving a surrogate pair', () => {
    expect(cutText('hello', 5)).toBe('hello');
    expect(cutText('hello!', 5)).toBe('hell…');
    const cut = cutText('abc😀def', 5);
    expect(cut).toBe('abc…');
    expect(cutText('x'.repeat(5000), 4000)).toHaveLength(4000);
  });
});
