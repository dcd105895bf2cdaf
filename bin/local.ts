/**
 * `npm start`: the whole service on this machine. Data lives in CHAT_DATA_DIR (default `.data/`);
 * `--in-memory` runs on a throwaway store. Ctrl-C stops everything it started, Java included.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DEMO_PROJECT_ID } from '../lib/local/demo-session';
import { startLocalRuntime } from '../lib/local/runtime';

const inMemory = process.argv.includes('--in-memory');
const dataDir = inMemory ? undefined : resolve(process.env.CHAT_DATA_DIR ?? '.data');
/** A start that cannot go on says why in one line (what to change or install), never with a stack trace. */
function cannotStart(reason: string): never {
  console.error(`Could not start: ${reason}`);
  process.exit(1);
}

const port = Number(process.env.PORT ?? 8787);
if (!Number.isInteger(port) || port < 0 || port > 65_535) cannotStart(`PORT must be a port number, not ${process.env.PORT}`);

const settingNames = [
  'CHAT_OPERATOR_KEY',
  'RATE_LIMIT_MESSAGES_PER_MINUTE',
  'RATE_LIMIT_MESSAGE_KEYS',
  'TOKEN_DEFAULT_TTL_SECONDS',
  'TOKEN_MAX_TTL_SECONDS',
  'CACHE_TTL_MS',
  'MESSAGE_MAX_LENGTH',
  'WEBHOOK_MAX_ATTEMPTS',
  'WEBHOOK_TIMEOUT_MS',
  'WEBHOOK_RETRY_TIME_SCALE',
  'WEBHOOK_ALLOW_PRIVATE_TARGETS',
  'WEBHOOK_SECRET_ENCRYPTION_KEY',
  'SIGNING_SECRET_ENCRYPTION_KEY',
  'RATE_LIMIT_WEBHOOK_VERIFY_PER_MINUTE',
  'DAILY_DIGEST_ENABLED',
  'DIGEST_EMAIL_FROM',
  'ATTACHMENTS_ENABLED',
];
const env = Object.fromEntries(settingNames.flatMap((name) => (process.env[name] ? [[name, process.env[name] as string]] : [])));

const started = Date.now();
// Outage tests switch the event fan-out over HTTP; a normal start has no such door.
const controls = process.env.CHAT_LOCAL_CONTROLS === 'true';
let apiKey = '';
const runtime = await startLocalRuntime({
  port,
  dataDir,
  env,
  controls,
  // Before /health says ready, so a script that waits for it can mint a token with the demo key.
  beforeReady: async () => {
    apiKey = await ensureDemoProject();
  },
}).catch((error: NodeJS.ErrnoException) =>
  cannotStart(
    error.code === 'EADDRINUSE'
      ? `port ${port} is in use (another \`npm start\`?): stop what holds it, or choose another port (\`PORT=0 npm start\` takes a free one)`
      : error.message,
  ),
);

let stopping = false;
const stop = async (signal: string) => {
  if (stopping) return;
  stopping = true;
  console.log(`\n${signal}: stopping`);
  await runtime.stop();
  process.exit(0);
};
process.on('SIGINT', () => void stop('SIGINT'));
process.on('SIGTERM', () => void stop('SIGTERM'));

/**
 * The demo project exists from the first start on. Its API key is `CHAT_API_KEY` when set, else a
 * generated one kept beside the data (only its hash is in the table) so later starts can print it.
 */
async function ensureDemoProject(): Promise<string> {
  const { createProject, projectExists, rotateProjectKeys } = await import('#domain/projects/projects');
  const keyFile = dataDir ? join(dataDir, 'demo-api-key') : undefined;
  const wanted = process.env.CHAT_API_KEY;
  if (wanted && !/^ck_demo_[A-Za-z0-9_-]{20,}$/.test(wanted)) {
    throw new Error('CHAT_API_KEY must look like ck_demo_<20 or more letters, digits, _ or ->');
  }
  let apiKey: string;
  if (!(await projectExists(DEMO_PROJECT_ID))) {
    apiKey = (await createProject({ name: 'Demo', projectId: DEMO_PROJECT_ID, ...(wanted ? { apiKey: wanted } : {}) })).apiKey;
  } else if (wanted) {
    apiKey = wanted;
    await rotateProjectKeys(DEMO_PROJECT_ID, { apiKey: true, signingSecret: false, newApiKey: wanted });
  } else if (keyFile && existsSync(keyFile)) {
    apiKey = readFileSync(keyFile, 'utf8').trim();
  } else {
    apiKey = (await rotateProjectKeys(DEMO_PROJECT_ID, { apiKey: true, signingSecret: false })).apiKey as string;
  }
  if (keyFile && dataDir) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(keyFile, `${apiKey}\n`, { mode: 0o600 });
  }
  return apiKey;
}

/** Whether AI answers here, and from where: `503 ai_not_configured` is otherwise the first a newcomer hears of it. */
async function aiSummary(): Promise<string> {
  const { aiBaseUrl, modelFor } = await import('#domain/ai/assistant');
  const baseUrl = aiBaseUrl();
  if (!baseUrl) return 'off: set AI_BASE_URL (and AI_MODEL), e.g. AI_BASE_URL=http://127.0.0.1:11434/v1 AI_MODEL=llama3.2 for Ollama';
  const models = { agents: modelFor('agent'), suggestions: modelFor('suggestions'), summaries: modelFor('thread_summary') };
  const distinct = new Set(Object.values(models));
  const named =
    distinct.size === 1
      ? `model ${models.agents}`
      : `models: ${Object.entries(models)
          .map(([purpose, model]) => `${purpose} ${model}`)
          .join(', ')}`;
  return `on: ${baseUrl}, ${named}`;
}

const base = runtime.baseUrl;
const readyMs = Date.now() - started;
const ai = await aiSummary();
console.log(`Chat service ready in ${readyMs} ms (${dataDir ? `data in ${dataDir}` : 'in memory'})
  Demo page:   ${base}/  (chat in the browser; open a second tab to talk to yourself)
  Console:     ${base}/console/  (sign in with the API key below)
  Base URL:    ${base}
  WebSocket:   ${base.replace('http', 'ws')}/ws/rooms/<roomId>?token=<JWT>  (user channel: /ws/user/<userId>?token=<JWT>)
  SSE:         ${base}/rooms/<roomId>/stream?token=<JWT>
  Project id:  ${DEMO_PROJECT_ID}
  API key:     ${apiKey}
  AI:          ${ai}
  Mailbox:     ${runtime.sesMailboxUrl}  (digest e-mails, SES emulator; JSON at ${runtime.sesEndpoint}/store)
  Digest:      ${process.env.DAILY_DIGEST_ENABLED === 'true' ? 'daily at 08:00 UTC' : 'schedule off (DAILY_DIGEST_ENABLED=true turns it on)'}; run now: curl -X POST ${base}/_local/schedules/DailyDigest
  Operator:    ${process.env.CHAT_OPERATOR_KEY ? 'POST /platform/projects enabled' : 'set CHAT_OPERATOR_KEY to enable /platform routes'}

Try it:
  curl -s -X POST ${base}/auth/token -H 'X-Service-Api-Key: ${apiKey}' -H 'content-type: application/json' -d '{"userId":"alice"}'`);
