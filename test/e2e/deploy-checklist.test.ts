import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { type SecretId, secretDefinitions } from '#wiring/bindings';
import { secretOutputId } from '../../lib/constructs/chat-secrets.ts';
import { api, runtime } from '../support/api';
import { deployChecklist } from '../support/deploy-checklist';
import { repoRoot } from '../support/local-process';

/**
 * The "After" part of docs/operations.md's first-deploy checklist, typed as the document says, in one
 * bash session against the local runtime: print the outputs, put the AI provider's key, read the
 * operator key, create the first project with the CLI, run the smoke script. Only `aws` is stood in
 * (test/support/aws-cli-stand-in.ts): the stack's outputs are the runtime's URLs in their AWS forms,
 * and its operator-key secret the runtime's operator key. test/infra/deploy-docs.test.ts checks the
 * part before (the deploy command's context keys synthesize).
 */

const checklist = deployChecklist();
const execFileAsync = promisify(execFile);

/** Runs a bash script; its exit code, stdout and stderr, whatever the code. */
async function bash(script: string, options: { cwd: string; env: NodeJS.ProcessEnv }) {
  try {
    const { stdout, stderr } = await execFileAsync('bash', ['-c', script], { ...options, timeout: 150_000, maxBuffer: 16 * 1024 * 1024 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as Error & { code?: unknown; stdout?: string; stderr?: string };
    if (typeof failed.code !== 'number') throw error;
    return { code: failed.code, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}
const stackName = `Chat-${checklist.context.stage ?? 'dev'}`;
const workDir = mkdtempSync(path.join(tmpdir(), 'chat-checklist-'));

afterAll(() => rmSync(workDir, { recursive: true, force: true }));

/** The stand-in's state: what the deployed stack would answer. */
function standInState() {
  const secretArn = (secretId: string) => `arn:aws:secretsmanager:eu-west-1:123456789012:secret:chat-checklist-${secretId}-AbCdEf`;
  const secretIds = Object.keys(secretDefinitions) as SecretId[];
  return {
    stackName,
    outputs: {
      // The local runtime answers every spec path on one port, as the edge distribution does.
      BaseUrl: runtime().baseUrl,
      HttpApiUrl: `${runtime().baseUrl}/`,
      WebSocketUrl: `${runtime().wsUrl}/ws`,
      SseUrl: `${runtime().baseUrl}/`,
      ...Object.fromEntries(secretIds.map((secretId) => [secretOutputId(secretId), secretArn(secretId)])),
    } as Record<string, string>,
    secrets: Object.fromEntries(
      secretIds.map((secretId) => [secretArn(secretId), secretId === 'operator-key' ? runtime().operatorKey : 'unset']),
    ),
    calls: [] as string[],
  };
}

describe('first-deploy checklist, "After" (docs/operations.md)', () => {
  it('names the steps a newcomer needs once the stack is up: outputs, the AI key, the first project, the smoke test', () => {
    const after = checklist.afterBlocks.join('\n');

    expect(after).toContain('--query "Stacks[0].Outputs" --output table');
    expect(after).toContain('aws secretsmanager put-secret-value --secret-id "$(output AiKeySecretArn)"');
    expect(after).toMatch(/^npm run chat -- project create /m);
    expect(after).toMatch(/^npm run smoke -- /m);
  });

  it('runs as written against the local runtime: the CLI creates a working project, the smoke script passes', async () => {
    // Prepare: `aws` on PATH is the stand-in
    const state = standInState();
    const stateFile = path.join(workDir, 'aws-state.json');
    writeFileSync(stateFile, JSON.stringify(state));
    const binDir = path.join(workDir, 'bin');
    const aws = path.join(binDir, 'aws');
    mkdirSync(binDir, { recursive: true });
    writeFileSync(
      aws,
      `#!/bin/sh\nexec "${process.execPath}" --import tsx "${path.join(repoRoot, 'test/support/aws-cli-stand-in.ts')}" "$@"\n`,
    );
    chmodSync(aws, 0o755);
    const providerKey = 'sk-checklist-provider-key-3f9a';

    // Act: the blocks in order, in one shell, stopping at the first failure
    const run = await bash(['set -e -o pipefail', ...checklist.afterBlocks].join('\n'), {
      cwd: repoRoot,
      env: {
        ...process.env,
        PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}`,
        CHAT_AWS_STAND_IN: stateFile,
        AI_PROVIDER_KEY: providerKey,
        CHAT_URL: '',
        CHAT_OPERATOR_KEY: '',
        CHAT_SMOKE_API_KEY: '',
      },
    });

    // Assess
    const transcript = `${run.stdout}\n${run.stderr}`;
    expect(run.code, transcript).toBe(0);
    const after = JSON.parse(readFileSync(stateFile, 'utf8')) as typeof state;
    expect(after.secrets[state.outputs.AiKeySecretArn ?? '']).toBe(providerKey);
    expect(after.calls.filter((call) => call.startsWith('cloudformation describe-stacks')).length).toBeGreaterThanOrEqual(
      checklist.outputsRead.length,
    );
    const project = JSON.parse(/^\{\n[\s\S]*?^\}$/m.exec(run.stdout)?.[0] ?? 'null') as { projectId: string; apiKey: string } | null;
    expect(project, transcript).toMatchObject({ projectId: expect.stringMatching(/^prj-/), apiKey: expect.stringMatching(/^ck_/) });
    expect((await api('/auth/token', { apiKey: project?.apiKey, body: { userId: 'first-user' } })).status).toBe(201);
    // The smoke script ran on the operator key: its own throwaway project, then every step.
    expect(run.stdout).toMatch(/^✓ project +\d+ ms/m);
    expect(run.stdout).toMatch(/^Smoke test passed in \d+ ms$/m);
  }, 180_000);
});
