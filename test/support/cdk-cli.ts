import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { repoRoot } from '../../lib/constructs/chat-function.ts';

/** The environment of this process without anything that could reach an AWS account. */
export function credentialFreeEnvironment(): NodeJS.ProcessEnv {
  const environment = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('AWS_') && !name.startsWith('CDK_DEFAULT_')),
  );
  return {
    ...environment,
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    AWS_EC2_METADATA_DISABLED: 'true',
    CDK_DISABLE_VERSION_CHECK: 'true',
    CDK_DISABLE_CLI_TELEMETRY: 'true',
  };
}

export interface CdkCliResult {
  readonly status: number | null;
  /** stdout, then stderr. */
  readonly output: string;
}

/** `npx cdk <args> --no-notices` from the repository root, as a newcomer runs it, offline and without credentials. */
export function runCdkCli(args: readonly string[], options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): CdkCliResult {
  const run = spawnSync(process.execPath, [path.join(repoRoot, 'node_modules/aws-cdk/bin/cdk'), ...args, '--no-notices'], {
    cwd: repoRoot,
    env: { ...credentialFreeEnvironment(), ...options.env },
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 230_000,
  });
  return { status: run.status, output: `${run.stdout}\n${run.stderr}` };
}
