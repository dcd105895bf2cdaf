import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientOf, uniqueId } from '../support/api';
import { download, pngBytes, sendBytes, upload, wavBytes } from '../support/attachments';
import { type LocalProcess, startLocalProcess } from '../support/local-process';

/**
 * Attachments on runtimes of their own (`npm start` as a process): files kept under CHAT_DATA_DIR
 * by the S3 stand-in survive a restart, as the table does; a voice message without AI configured
 * is stored without a transcript; and a runtime without the bucket (`ATTACHMENTS_ENABLED=false`,
 * as a deployment with `attachmentsEnabled=false`) answers 503 attachments_not_configured.
 */

const dataDirs: string[] = [];
const running: LocalProcess[] = [];
const dataDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'attachments-'));
  dataDirs.push(dir);
  return dir;
};
/** `npm start` with data in `dir`, no AI (the test process's AI_BASE_URL is the shared runtime's), and `env`. */
async function start(dir: string, env: Record<string, string> = {}) {
  const server = await startLocalProcess({ env: { CHAT_DATA_DIR: dir, AI_BASE_URL: '', ...env } });
  running.push(server);
  return server;
}
async function userToken(server: LocalProcess) {
  const issued = await clientOf(server.baseUrl)('/auth/token', { apiKey: server.apiKey, body: { userId: uniqueId('user') } });
  return issued.body.token as string;
}

let kept: LocalProcess;
let without: LocalProcess;
let keptDir: string;

beforeAll(async () => {
  keptDir = dataDir();
  [kept, without] = await Promise.all([start(keptDir), start(dataDir(), { ATTACHMENTS_ENABLED: 'false' })]);
}, 120_000);

afterAll(async () => {
  await Promise.all(running.map((server) => server.stop()));
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

describe('a runtime restart', () => {
  it('keeps uploaded files and voice messages (stored without a transcript when AI is not configured)', { timeout: 120_000 }, async () => {
    // Prepare
    const token = await userToken(kept);
    const request = clientOf(kept.baseUrl);
    const roomId = uniqueId('room');
    await request('/rooms', { token, body: { id: roomId, type: 'group' } });
    const bytes = pngBytes(5000);
    const uploaded = await upload(token, bytes, 'image/png', { baseUrl: kept.baseUrl });
    const voice = await sendBytes(`/messages/voice?roomId=${roomId}`, wavBytes(0.25), {
      token,
      contentType: 'audio/wav',
      baseUrl: kept.baseUrl,
    });
    await kept.stop();

    // Act
    const restarted = await start(keptDir);
    const path = new URL(uploaded.body.url).pathname;
    const after = await download(`${restarted.baseUrl}${path}`);
    const ownHistory = await clientOf(restarted.baseUrl)(`/rooms/${roomId}/messages`, { token });

    // Assess
    expect(uploaded.status).toBe(201);
    expect(voice.status).toBe(201);
    expect(voice.body.message.voice).toEqual({ durationMs: 250, transcript: null, transcriptStatus: 'none' });
    expect(after.file.headers.get('content-type')).toBe('image/png');
    expect(after.bytes.equals(bytes)).toBe(true);
    expect(ownHistory.body.messages).toEqual([expect.objectContaining({ id: voice.body.message.id, voice: voice.body.message.voice })]);
  });
});

describe('a runtime without the attachments bucket', () => {
  it.each([
    { label: 'POST /upload', call: (token: string) => upload(token, pngBytes(), 'image/png', { baseUrl: without.baseUrl }) },
    {
      label: 'POST /messages/voice',
      call: (token: string) =>
        sendBytes(`/messages/voice?roomId=${uniqueId('room')}`, wavBytes(0.1), {
          token,
          contentType: 'audio/wav',
          baseUrl: without.baseUrl,
        }),
    },
    {
      label: 'GET /attachments/...',
      call: () => clientOf(without.baseUrl)(`/attachments/some-project/${'A'.repeat(22)}/${'B'.repeat(22)}/a.png`),
    },
  ])('$label answers 503 attachments_not_configured, naming the setting', async ({ call }) => {
    // Act
    const response = await call(await userToken(without));

    // Assess
    expect(response).toMatchObject({ status: 503, body: { error: { code: 'attachments_not_configured' } } });
    expect(response.body.error.message).toContain('attachmentsEnabled');
  });
});
