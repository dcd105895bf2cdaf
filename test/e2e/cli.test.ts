import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { api, runtime } from '../support/api';
import { repoRoot, startLocalProcess } from '../support/local-process';

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

  it.each([['--help'], ['-h'], ['help'], ['project', 'create', '--help']])(
    'prints the usage on stdout and exits 0 for %s',
    async (...args) => {
      // Act
      const answered = await chat(args, { CHAT_OPERATOR_KEY: '' });

      // Assess
      expect(answered.stdout).toMatch(/^usage:\n {2}npm run chat -- project create <name>/);
      expect(answered.stderr).toBe('');
    },
  );

  it('asks whether the server has an operator key when /platform answers 404', async () => {
    // Prepare
    // The test process carries the shared runtime's settings, its operator key among them: cleared here.
    const keyless = await startLocalProcess({ args: ['--in-memory'], env: { CHAT_OPERATOR_KEY: '' } });
    try {
      // Act
      const failure = await chat(['project', 'create', 'x'], { CHAT_URL: keyless.baseUrl, CHAT_OPERATOR_KEY: runtime().operatorKey }).catch(
        (error) => error,
      );

      // Assess
      expect(failure.code).toBe(2);
      expect(failure.stderr).toContain(`${keyless.baseUrl} has no /platform routes. Was the server started with an operator key?`);
      expect(failure.stderr).toContain('CHAT_OPERATOR_KEY');
    } finally {
      await keyless.stop();
    }
  });

  it('fails with a clear message and exit code 2 without the operator key', async () => {
    const failure = await chat(['project', 'create', 'x'], { CHAT_URL: runtime().baseUrl, CHAT_OPERATOR_KEY: '' }).catch((error) => error);
    expect(failure.code).toBe(2);
    expect(failure.stderr).toContain('CHAT_OPERATOR_KEY');
  });
});
