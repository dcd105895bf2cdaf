/**
 * Operator CLI. Talks to a running service (local or deployed) over its operator API, so it needs no
 * AWS credentials of its own:
 *
 *   CHAT_URL=https://api.example.com CHAT_OPERATOR_KEY=... npm run chat -- project create "Acme"
 *   npm run chat -- project rotate-keys <projectId> [--signing-secret]
 *
 * CHAT_URL defaults to the local runtime (http://127.0.0.1:8787).
 */
export {};

const usage = `usage:
  npm run chat -- project create <name> [--id <projectId>]
  npm run chat -- project rotate-keys <projectId> [--signing-secret] [--keep-api-key]
  npm run chat -- --help
env: CHAT_URL (default http://127.0.0.1:8787), CHAT_OPERATOR_KEY (required)`;

function fail(message: string): never {
  console.error(message);
  process.exit(2);
}

function option(args: string[], name: string): string | undefined {
  const index = args.indexOf(name);
  return index >= 0 ? args[index + 1] : undefined;
}

/**
 * What to say about a refused call. A `/platform` route answers a bare 404 when the server has no
 * operator key (the routes do not exist then), which alone reads like a wrong URL: say both.
 */
function refusal(baseUrl: string, status: number, text: string): string {
  let code: unknown;
  try {
    code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
  } catch {
    code = undefined;
  }
  if (status !== 404 || (code !== undefined && code !== 'not_found')) return `${status} ${text}`;
  return [
    `${status} ${text}`,
    `${baseUrl} has no /platform routes. Was the server started with an operator key? ` +
      'Locally, start it with CHAT_OPERATOR_KEY set (at least 16 characters) and use the same value here; ' +
      'on AWS, CHAT_OPERATOR_KEY is the operator-key secret (OperatorKeySecretArn output). ' +
      'Check too that CHAT_URL is the service base URL.',
  ].join('\n');
}

async function call(path: string, body: unknown): Promise<unknown> {
  const baseUrl = (process.env.CHAT_URL ?? 'http://127.0.0.1:8787').replace(/\/$/, '');
  const operatorKey = process.env.CHAT_OPERATOR_KEY || fail(`CHAT_OPERATOR_KEY is not set\n${usage}`);
  const response = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-service-operator-key': operatorKey },
    body: JSON.stringify(body),
  }).catch((error: Error) => fail(`Cannot reach ${baseUrl}: ${error.message}`));
  const text = await response.text();
  if (!response.ok) fail(refusal(baseUrl, response.status, text));
  return JSON.parse(text);
}

const args = process.argv.slice(2);
const [area, command, ...rest] = args;
if (args.includes('--help') || args.includes('-h') || area === 'help') {
  // Asked for: the usage is the answer, on stdout, and not a failure.
  console.log(usage);
} else if (area === 'project' && command === 'create') {
  const name = rest.find((arg, index) => !arg.startsWith('--') && rest[index - 1] !== '--id') ?? fail(usage);
  const projectId = option(rest, '--id');
  console.log(JSON.stringify(await call('/platform/projects', { name, ...(projectId ? { projectId } : {}) }), null, 2));
} else if (area === 'project' && command === 'rotate-keys') {
  const projectId = rest.find((arg) => !arg.startsWith('--')) ?? fail(usage);
  const body = { apiKey: !rest.includes('--keep-api-key'), signingSecret: rest.includes('--signing-secret') };
  console.log(JSON.stringify(await call(`/platform/projects/${encodeURIComponent(projectId)}/rotate-keys`, body), null, 2));
} else {
  fail(usage);
}
