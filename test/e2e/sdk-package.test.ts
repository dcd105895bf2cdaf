import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, createTestProject, newGroupRoom, newUser, runtime } from '../support/api';
import { repoRoot } from '../support/local-process';

const run = promisify(execFile);

interface Packed {
  readonly filename: string;
  readonly files: readonly { readonly path: string }[];
}

/** A folder outside the repository, as a newcomer's own project sits: the tarballs, an npm cache and home of its own, and the app. */
let workspace: string;
let app: string;
let sdkTarball: Packed;
const installed = () => join(app, 'node_modules', '@serverless-chat', 'sdk');

/**
 * Nothing of this process's environment but PATH: no `npm_config_*` of the npm that started the
 * tests, no user `.npmrc` (HOME is the workspace) and an empty cache, so an install that needed the
 * registry would fail under `--offline`.
 */
const isolatedEnv = (extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? '',
  HOME: workspace,
  npm_config_cache: join(workspace, 'npm-cache'),
  npm_config_update_notifier: 'false',
  ...extra,
});

const npm = (args: string[], cwd: string) => run('npm', args, { cwd, env: isolatedEnv(), timeout: 90_000, maxBuffer: 16 * 1024 * 1024 });

/** `npm pack` of a folder into the workspace; lifecycle output (the SDK's build) comes before the JSON. */
async function pack(folder: string): Promise<Packed> {
  const { stdout } = await npm(['pack', '--json', '--pack-destination', workspace], folder);
  return JSON.parse(stdout.slice(stdout.search(/^\[/m)))[0];
}

beforeAll(async () => {
  workspace = await mkdtemp(join(tmpdir(), 'chat-sdk-package-'));
  app = join(workspace, 'app');
  // The build output may be left from an earlier build: packing must make its own.
  await rm(join(repoRoot, 'sdk', 'dist'), { recursive: true, force: true });
  const [sdk, ws] = await Promise.all([pack(join(repoRoot, 'sdk')), pack(join(repoRoot, 'node_modules', 'ws'))]);
  sdkTarball = sdk;
  await mkdir(app);
  await writeFile(join(app, 'package.json'), JSON.stringify({ name: 'sdk-consumer', private: true, type: 'module' }));
  await npm(['install', '--offline', '--no-audit', '--no-fund', join(workspace, sdk.filename), join(workspace, ws.filename)], app);
}, 120_000);

afterAll(async () => {
  if (workspace) await rm(workspace, { recursive: true, force: true });
});

/** The Node example started as a user starts it, collecting its output line by line. */
function startExample(env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, ['node.mjs'], { cwd: app, env: isolatedEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return {
    child,
    exited,
    output: () => ({ stdout, stderr }),
    async line(pattern: RegExp, timeoutMs = 15_000): Promise<RegExpExecArray> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = pattern.exec(stdout);
        if (match) return match;
        if (child.exitCode !== null || Date.now() > deadline) {
          throw new Error(`no line ${pattern} (exit ${child.exitCode}):\n${stdout}\n${stderr}`);
        }
        await new Promise((next) => setTimeout(next, 25));
      }
    },
  };
}

describe('the SDK as an npm package installed outside the repository', { timeout: 60_000 }, () => {
  it('packs the built JavaScript, its declarations, the examples and the README, and no TypeScript source', async () => {
    // Act
    const files = sdkTarball.files.map((file) => file.path);
    const distribution = await readdir(join(installed(), 'dist'));
    const javascript = await Promise.all(
      distribution.filter((name) => name.endsWith('.js')).map((name) => readFile(join(installed(), 'dist', name), 'utf8')),
    );

    // Assess
    expect(files).toEqual(
      expect.arrayContaining([
        'package.json',
        'README.md',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/websocket-implementation.js',
        'examples/node.mjs',
        'examples/browser.html',
      ]),
    );
    expect(files.filter((path) => /(?<!\.d)\.ts$|tsconfig/.test(path))).toEqual([]);
    // Browsers load the same files: `ws` may only be imported on demand, never statically.
    expect(javascript.join('\n')).not.toMatch(/^\s*(import|export)\b[^;]*?\bfrom\s*['"]ws['"]|^\s*import\s*['"]ws['"]/m);
  });

  it('runs the Node example with plain node: connects over the WebSocket (ws found on its own), receives, sends with an ack, disconnects', async () => {
    // Prepare
    const project = await createTestProject('sdk-package');
    const member = await newUser(project, 'example');
    const { owner, roomId } = await newGroupRoom(project, [member.userId]);
    const earlier = await api(`/rooms/${roomId}/messages`, { token: owner.token, body: { content: 'before the example' } });
    await cp(join(installed(), 'examples', 'node.mjs'), join(app, 'node.mjs'));

    // Act
    const example = startExample({
      CHAT_URL: runtime().baseUrl,
      CHAT_TOKEN: member.token,
      CHAT_ROOM: roomId,
      CHAT_MESSAGE: 'hello from the packed SDK',
    });
    const sent = await example.line(/^sent (\d+) acknowledged over (\S+)$/m);
    const live = await api(`/rooms/${roomId}/messages`, { token: owner.token, body: { content: 'while the example listens' } });
    await example.line(new RegExp(`^message ${live.body.id} from `, 'm'));
    example.child.kill('SIGINT');
    const code = await example.exited;

    // Assess
    const { stdout, stderr } = example.output();
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(sent[2]).toBe('WebSocket');
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe('state connecting → connected');
    expect(lines).toContain(`message ${earlier.body.id} from ${owner.userId}: before the example`);
    expect(lines).toContain(`message ${sent[1]} from ${member.userId}: hello from the packed SDK`);
    expect(lines).toContain(`message ${live.body.id} from ${owner.userId}: while the example listens`);
    expect(lines.at(-1)).toBe('state connected → disconnected');
    const stored = await api(`/rooms/${roomId}/messages`, { token: owner.token });
    expect(stored.body.messages.map((message: { id: number; userId: string }) => [message.id, message.userId])).toEqual([
      [earlier.body.id, owner.userId],
      [Number(sent[1]), member.userId],
      [live.body.id, owner.userId],
    ]);
  });

  it('typechecks a TypeScript consumer with "moduleResolution": "nodenext" against the installed declarations', async () => {
    // Prepare
    await writeFile(
      join(app, 'consumer.ts'),
      [
        "import { ChatError, createRoomClient, type Message, type RoomClient } from '@serverless-chat/sdk';",
        "const room: RoomClient = createRoomClient({ baseUrl: 'http://127.0.0.1:8787', roomId: 'lobby', token: 'a-jwt' });",
        "room.on('message', (message: Message) => console.log(message.id.toFixed(0), message.content.toUpperCase()));",
        "export const stored: Promise<Message> = room.send('hello', { attachments: ['https://example.com/cat.png'] });",
        '// @ts-expect-error: the declarations are read, not `any`: content is a string',
        'room.send(42);',
        'export const isChatError = (error: unknown): error is ChatError => error instanceof ChatError;',
        '',
      ].join('\n'),
    );
    await writeFile(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, types: [] },
        files: ['consumer.ts'],
      }),
    );

    // Act
    const outcome = await run(process.execPath, [join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app], {
      cwd: app,
      env: isolatedEnv(),
    }).catch((error: { stdout?: string; code?: number }) => ({ stdout: `exit ${error.code}: ${error.stdout}` }));

    // Assess
    expect(outcome.stdout).toBe('');
  });

  it("the browser page imports the package's built entry, which exports what the page uses", async () => {
    // Prepare
    const page = await readFile(join(installed(), 'examples', 'browser.html'), 'utf8');
    const [, names = '', specifier = ''] = /import \{([^}]+)\} from '([^']+)'/.exec(page) ?? [];
    const entry = resolve(installed(), 'examples', specifier);

    // Act
    const { stdout } = await run(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const module = await import(${JSON.stringify(pathToFileURL(entry).href)}); console.log(JSON.stringify(Object.keys(module)));`,
      ],
      { cwd: app, env: isolatedEnv() },
    );

    // Assess
    expect(entry).toBe(join(installed(), 'dist', 'index.js'));
    expect(JSON.parse(stdout)).toEqual(expect.arrayContaining(names.split(',').map((name) => name.trim())));
  });
});
