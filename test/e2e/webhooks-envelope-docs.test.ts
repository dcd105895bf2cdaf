import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, createTestProject, newGroupRoom } from '../support/api';
import { markedCodeBlock, markedTableRows, readDoc } from '../support/docs';
import { eventually, type ReceivedRequest, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * docs/api.md's webhook envelope against a real delivery on the shared runtime: the example body
 * has the fields the service sends, the headers table names the headers it sends, and the Node and
 * Python verification snippets, copied out of the page as they stand, accept the delivery's raw
 * bytes, headers and secret and refuse every tampered variant.
 */

const apiDoc = readDoc('docs/api.md');
/** Non-ASCII and JSON-escaped characters, so a snippet that re-encodes the body instead of signing its bytes fails. */
const CONTENT = 'Grüße from the docs test ✓ "quoted" \\ back';

let receiver: WebhookReceiver;
let secret: string;
let delivery: ReceivedRequest;
let workDir: string;

beforeAll(async () => {
  [receiver, workDir] = await Promise.all([startWebhookReceiver(), mkdtemp(join(tmpdir(), 'webhook-docs-'))]);
  const project = await createTestProject('webhook-docs');
  const registered = await api('/webhooks/register', {
    apiKey: project.apiKey,
    body: { url: receiver.url, eventTypes: ['message.created'] },
  });
  if (registered.status !== 201) throw new Error(`registration failed: ${registered.status} ${JSON.stringify(registered.body)}`);
  secret = registered.body.secret;
  receiver.secret = secret;
  const { owner, roomId } = await newGroupRoom(project);
  const posted = await api('/messages', { token: owner.token, body: { roomId, content: CONTENT } });
  if (posted.status !== 201) throw new Error(`posting failed: ${posted.status}`);
  delivery = await eventually('the message.created delivery', async () =>
    receiver.requests.find((request) => JSON.parse(request.rawBody).payload.messageId === posted.body.id),
  );
});
afterAll(async () => {
  await receiver?.close();
  if (workDir) await rm(workDir, { recursive: true, force: true });
});

describe('the documented envelope', () => {
  it('has the fields of the body the service sends, and no id', () => {
    // Prepare
    const example = JSON.parse(markedCodeBlock(apiDoc, 'webhook-envelope:example').code);
    const body = JSON.parse(delivery.rawBody);

    // Assess
    expect(Object.keys(body).sort()).toEqual(Object.keys(example).sort());
    expect(body).not.toHaveProperty('id');
    expect(example.type).toBe('message.created');
    expect(Object.keys(body.payload).sort()).toEqual(Object.keys(example.payload).sort());
    for (const [key, value] of Object.entries(example.payload)) expect(typeof body.payload[key], key).toBe(typeof value);
    expect(body.payload.content).toBe(CONTENT);
  });

  it('names every header the service sends, with the fixed values it documents', () => {
    // Prepare
    const rows = markedTableRows(apiDoc, 'webhook-envelope:headers');
    const documented = new Map(rows.map(([name, value]) => [(name ?? '').replaceAll('`', '').toLowerCase(), value ?? '']));
    const sent = Object.keys(delivery.headers).filter(
      (name) => name.startsWith('x-service-') || ['content-type', 'user-agent'].includes(name),
    );

    // Assess
    expect([...documented.keys()].sort()).toEqual(sent.sort());
    expect(documented.get('content-type')).toBe(`\`${delivery.headers['content-type']}\``);
    expect(documented.get('user-agent')).toBe(`\`${delivery.headers['user-agent']}\``);
    expect(delivery.headers['x-service-delivery-id']).toMatch(/^whd_[0-9a-f]{32}$/);
    expect(delivery.headers['x-service-event']).toBe('message.created');
  });
});

interface Case {
  readonly name: string;
  readonly body: Buffer;
  readonly headers: Record<string, unknown>;
  readonly secret: string;
  readonly now?: number;
  readonly accepted: boolean;
}

/** The delivery as received, then one change at a time that a receiver must refuse (or, inside the window, accept). */
function cases(): Case[] {
  const body = Buffer.from(delivery.rawBody, 'utf8');
  const headers = { ...delivery.headers } as Record<string, unknown>;
  const timestamp = Number(headers['x-service-timestamp']);
  const tampered = Buffer.from(body);
  tampered.writeUInt8(tampered.readUInt8(tampered.length - 2) ^ 1, tampered.length - 2);
  const base = { body, headers, secret };
  return [
    { ...base, name: 'the delivery as received', accepted: true },
    { ...base, name: 'its timestamp 300 s old (the edge of the window)', now: timestamp + 300, accepted: true },
    { ...base, name: 'its timestamp 301 s old', now: timestamp + 301, accepted: false },
    { ...base, name: 'its timestamp 301 s ahead', now: timestamp - 301, accepted: false },
    { ...base, name: 'one bit of the body flipped', body: tampered, accepted: false },
    { ...base, name: 'another secret', secret: `${secret}x`, accepted: false },
    {
      ...base,
      name: 'another delivery id',
      headers: { ...headers, 'x-service-delivery-id': 'whd_0123456789abcdef0123456789abcdef' },
      accepted: false,
    },
    {
      ...base,
      name: 'another timestamp, in the window',
      headers: { ...headers, 'x-service-timestamp': String(timestamp - 1) },
      accepted: false,
    },
    { ...base, name: 'X-Service-Signature missing', headers: { ...headers, 'x-service-signature': undefined }, accepted: false },
    {
      ...base,
      name: 'X-Service-Signature-V2 of the body alone',
      headers: { ...headers, 'x-service-signature-v2': headers['x-service-signature'] },
      accepted: false,
    },
    {
      ...base,
      name: 'a valid X-Service-Signature with characters after it',
      headers: { ...headers, 'x-service-signature': `${headers['x-service-signature']}zz` },
      accepted: false,
    },
  ];
}

/** Runs `command` in the work folder with `input` on stdin; its stdout, or an error with its stderr. */
function run(command: string, args: string[], input: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: workDir, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${command} exited ${code}: ${stderr}`))));
    child.stdin.end(input);
  });
}

const asInput = (list: readonly Case[]) =>
  JSON.stringify(list.map(({ body, headers, secret, now }) => ({ body: body.toString('base64'), headers, secret, now: now ?? null })));

describe("the docs' verification snippets, run as they stand", () => {
  it('Node: accepts the delivery and refuses each tampered variant', async () => {
    // Prepare
    const snippet = markedCodeBlock(apiDoc, 'webhook-verify:node');
    expect(snippet.language).toBe('js');
    await writeFile(join(workDir, 'verify-webhook.mjs'), snippet.code);
    await writeFile(
      join(workDir, 'node-harness.mjs'),
      [
        "import { verifyWebhook } from './verify-webhook.mjs';",
        "let input = '';",
        'for await (const chunk of process.stdin) input += chunk;',
        'const verdicts = JSON.parse(input).map(({ body, headers, secret, now }) =>',
        "  now === null ? verifyWebhook(Buffer.from(body, 'base64'), headers, secret) : verifyWebhook(Buffer.from(body, 'base64'), headers, secret, now));",
        'console.log(JSON.stringify(verdicts));',
      ].join('\n'),
    );
    const list = cases();

    // Act
    const verdicts = JSON.parse(await run(process.execPath, ['node-harness.mjs'], asInput(list)));

    // Assess
    expect(Object.fromEntries(list.map((entry, index) => [entry.name, verdicts[index]]))).toEqual(
      Object.fromEntries(list.map((entry) => [entry.name, entry.accepted])),
    );
  });

  it('Python: accepts the delivery, with header names in any case, and refuses each tampered variant', async () => {
    // Prepare
    const snippet = markedCodeBlock(apiDoc, 'webhook-verify:python');
    expect(snippet.language).toBe('python');
    await writeFile(join(workDir, 'verify_webhook.py'), snippet.code);
    await writeFile(
      join(workDir, 'python_harness.py'),
      [
        'import base64, json, sys',
        'from verify_webhook import verify_webhook',
        'cases = json.load(sys.stdin)',
        'print(json.dumps([verify_webhook(base64.b64decode(c["body"]), {k: v for k, v in c["headers"].items() if v is not None}, c["secret"], c["now"]) for c in cases]))',
      ].join('\n'),
    );
    const titled = (headers: Record<string, unknown>) =>
      Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.replace(/(^|-)([a-z])/g, (m) => m.toUpperCase()), value]));
    const list = [
      ...cases(),
      { ...cases()[0], name: 'the delivery with Title-Case header names', headers: titled(delivery.headers) } as Case,
    ];

    // Act
    const verdicts = JSON.parse(await run('python3', ['python_harness.py'], asInput(list)));

    // Assess
    expect(Object.fromEntries(list.map((entry, index) => [entry.name, verdicts[index]]))).toEqual(
      Object.fromEntries(list.map((entry) => [entry.name, entry.accepted])),
    );
  });
});
