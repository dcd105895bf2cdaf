import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../lib/local/free-port';
import { api, createTestProject, runtime } from '../support/api';
import { repoRoot } from '../support/local-process';

const run = promisify(execFile);

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `npm run smoke -- <args>` as an operator runs it; credentials come only from `env`, never from the test's own environment. */
async function smoke(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'bin/smoke.ts', ...args], {
      cwd: repoRoot,
      env: { ...process.env, CHAT_SMOKE_API_KEY: '', CHAT_OPERATOR_KEY: '', ...env },
      timeout: 60_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as Error & Partial<Outcome>;
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

const STEPS = ['health', 'token', 'room', 'message', 'websocket', 'ping', 'message frame', 'sse', 'cleanup'];

/** The step names of the ✓/✗ lines, in order, with their marks. */
const stepLines = (stdout: string) => [...stdout.matchAll(/^([✓✗]) (\S+(?: frame)?) +\d+ ms/gm)].map(([, mark, step]) => `${mark} ${step}`);

// Each case starts a process of its own (about 1 s of TypeScript loading) and a passing run waits on
// the realtime worker's welcome frames.
describe('post-deploy smoke script (npm run smoke)', { timeout: 60_000 }, () => {
  it('passes every step against the local runtime with a project API key, and takes its users out of the room', async () => {
    // Prepare
    const project = await createTestProject('smoke script');

    // Act
    const outcome = await smoke([runtime().baseUrl], { CHAT_SMOKE_API_KEY: project.apiKey });

    // Assess
    expect(outcome.stderr).toBe('');
    expect(outcome.code).toBe(0);
    expect(stepLines(outcome.stdout)).toEqual(STEPS.map((step) => `✓ ${step}`));
    expect(outcome.stdout).toMatch(/^Smoke test passed in \d+ ms$/m);
    const roomId = /^✓ room +\d+ ms {2}(\S+)$/m.exec(outcome.stdout)?.[1] as string;
    expect(roomId).toMatch(/^smoke-\d{8}-\d{6}-[0-9a-f]{6}$/);
    const messages = await api(`/rooms/${roomId}/messages`, { apiKey: project.apiKey });
    expect(messages.body.messages.map((message: { userId: string }) => message.userId)).toEqual(['smoke-sender', 'smoke-sender']);
    expect((await api(`/rooms/${roomId}/members`, { apiKey: project.apiKey })).body).toEqual({ members: [], nextCursor: null });
  });

  it('with the operator key only, creates a throwaway project and connects through the AWS URL forms (--ws-url, --stream-url)', async () => {
    // Act
    const outcome = await smoke(
      [runtime().baseUrl, '--ws-url', `${runtime().wsUrl}/ws`, '--stream-url', `${runtime().baseUrl}/`, '--json'],
      { CHAT_OPERATOR_KEY: runtime().operatorKey },
    );

    // Assess
    expect(outcome.code).toBe(0);
    const report = JSON.parse(outcome.stdout);
    expect(report.ok).toBe(true);
    expect(report.steps.map((step: { step: string; ok: boolean }) => `${step.ok} ${step.step}`)).toEqual(
      ['health', 'project', ...STEPS.slice(1)].map((step) => `true ${step}`),
    );
    const project = report.steps.find((step: { step: string }) => step.step === 'project');
    expect(project.detail).toBe(`created ${report.runId}`);
    expect(report.steps.at(-1).detail).toContain(`project ${report.runId} kept`);
  });

  it('fails at the token step with exit code 1 and the service error for a bad API key, and runs no later step', async () => {
    // Act
    const outcome = await smoke([runtime().baseUrl, '--api-key', 'ck_nosuchproject_0123456789abcdefghij']);

    // Assess
    expect(outcome.code).toBe(1);
    expect(stepLines(outcome.stdout)).toEqual(['✓ health', '✗ token', '✓ cleanup']);
    expect(outcome.stdout).toContain('POST /auth/token answered 401 invalid_api_key');
    expect(outcome.stderr).toContain('Smoke test FAILED at token: POST /auth/token answered 401 invalid_api_key');
  });

  it('fails at once at the health step when nothing listens at the base URL', async () => {
    // Prepare
    const deadUrl = `http://127.0.0.1:${await freePort()}`;
    const started = Date.now();

    // Act
    const outcome = await smoke([deadUrl, '--api-key', 'ck_unused_0123456789abcdefghij']);

    // Assess
    expect(outcome.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(stepLines(outcome.stdout)).toEqual(['✗ health', '✓ cleanup']);
    expect(outcome.stderr).toContain(`Smoke test FAILED at health: GET ${deadUrl}/health failed: ECONNREFUSED`);
  });

  it('refuses to start without credentials, with exit code 2 and the usage', async () => {
    const outcome = await smoke([runtime().baseUrl]);
    expect(outcome.code).toBe(2);
    expect(outcome.stderr).toContain('CHAT_SMOKE_API_KEY');
    expect(outcome.stdout).toBe('');
  });
});
