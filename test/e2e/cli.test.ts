import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { api, runtime } from '../support/api';
import { repoRoot } from '../support/local-process';

const run = promisify(execFile);
const chat = (args: string[], env: Record<string, string>) =>
  run(process.execPath, ['--import', 'tsx', 'bin/chat.ts', ...args], { cwd: repoRoot, env: { ...process.env, ...env } });

describe('operator CLI (npm run chat)', () => {
  it('creates a project whose API key works, and rotates it', async () => {
    // Prepare
    const env = { CHAT_URL: runtime().baseUrl, CHAT_OPERATOR_KEY: runtime().operatorKey };

    // Act
    const created = JSON.parse((await chat(['project', 'create', 'From the CLI'], env)).stdout);
    const minted = await api('/auth/token', { apiKey: created.apiKey, body: { userId: 'ops' } });
    const rotated = JSON.parse((await chat(['project', 'rotate-keys', created.projectId], env)).stdout);

    // Assess
    expect(created).toMatchObject({ projectId: expect.stringMatching(/^prj-/), name: 'From the CLI' });
    expect(minted.status).toBe(201);
    expect((await api('/auth/token', { apiKey: created.apiKey, body: { userId: 'ops' } })).status).toBe(401);
    expect((await api('/auth/token', { apiKey: rotated.apiKey, body: { userId: 'ops' } })).status).toBe(201);
  });

  it('fails with a clear message and exit code 2 without the operator key', async () => {
    const failure = await chat(['project', 'create', 'x'], { CHAT_URL: runtime().baseUrl, CHAT_OPERATOR_KEY: '' }).catch((error) => error);
    expect(failure.code).toBe(2);
    expect(failure.stderr).toContain('CHAT_OPERATOR_KEY');
  });
});
