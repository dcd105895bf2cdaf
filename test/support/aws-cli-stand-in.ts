/**
 * The `aws` command for test/e2e/deploy-checklist.test.ts: the one program of the first-deploy
 * checklist that needs an AWS account. It answers the calls the checklist's "After" makes from the
 * local runtime, as the deployed stack would: stack outputs are the runtime's URLs, the operator-key
 * secret holds the runtime's operator key, and a put secret is kept (in the state file) for the test
 * to read. Any other call, or another stack, fails as the real CLI would, so a checklist that starts
 * depending on more of AWS fails the test instead of passing by accident.
 *
 * `CHAT_AWS_STAND_IN` names a JSON state file: `{ stackName, outputs, secrets, calls }`.
 */
import { readFileSync, writeFileSync } from 'node:fs';

interface StandInState {
  readonly stackName: string;
  readonly outputs: Record<string, string>;
  /** Secret values by ARN. */
  readonly secrets: Record<string, string>;
  /** Every call, as its arguments joined by spaces. */
  readonly calls: string[];
}

const stateFile = process.env.CHAT_AWS_STAND_IN ?? '';
const state = JSON.parse(readFileSync(stateFile, 'utf8')) as StandInState;
const args = process.argv.slice(2);
state.calls.push(args.join(' '));
writeFileSync(stateFile, JSON.stringify(state));

const option = (name: string) => {
  const index = args.indexOf(name);
  return index < 0 ? undefined : args[index + 1];
};

function fail(code: number, message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

const [service, command] = args;
const query = option('--query') ?? '';
if (service === 'cloudformation' && command === 'describe-stacks') {
  if (option('--stack-name') !== state.stackName)
    fail(254, `An error occurred (ValidationError): Stack with id ${option('--stack-name')} does not exist`);
  const one = /^Stacks\[0\]\.Outputs\[\?OutputKey=='(\w+)'\]\.OutputValue$/.exec(query);
  if (one) {
    // The real CLI prints "None" for an output the stack does not have; nothing a later step could use.
    const value = state.outputs[one[1] as string];
    if (value === undefined) fail(253, `the stand-in stack has no output ${one[1]}`);
    process.stdout.write(`${value}\n`);
  } else if (query === 'Stacks[0].Outputs') {
    for (const [key, value] of Object.entries(state.outputs)) process.stdout.write(`|  ${key}  |  ${value}  |\n`);
  } else {
    fail(252, `the stand-in answers no describe-stacks query ${query}`);
  }
} else if (service === 'secretsmanager' && command === 'get-secret-value' && query === 'SecretString') {
  const value = state.secrets[option('--secret-id') ?? ''];
  if (value === undefined) fail(254, `An error occurred (ResourceNotFoundException): Secrets Manager can't find the specified secret.`);
  process.stdout.write(`${value}\n`);
} else if (service === 'secretsmanager' && command === 'put-secret-value') {
  const secretId = option('--secret-id') ?? '';
  const value = option('--secret-string');
  if (!(secretId in state.secrets))
    fail(254, `An error occurred (ResourceNotFoundException): Secrets Manager can't find the specified secret.`);
  if (!value) fail(252, 'argument --secret-string: expected one argument');
  state.secrets[secretId] = value;
  writeFileSync(stateFile, JSON.stringify(state));
  process.stdout.write(`${JSON.stringify({ ARN: secretId, VersionId: 'stand-in' })}\n`);
} else {
  fail(2, `aws ${args.join(' ')}: needs an AWS account; the checklist test's stand-in does not answer it`);
}
