/**
 * What the bench process needs of the child processes that produce a bench's load (the receivers
 * of bench/realtime/receivers.ts, figure 2's bench/load-generator.ts): a handle that drives one
 * over IPC one command at a time, and the CPU readings of those and the other processes a
 * measurement accounts for.
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A message either way: every protocol tells its messages apart by `type`. */
interface Message {
  readonly type: string;
}

/**
 * A child `node --import tsx <script>` driven over IPC: each command is answered by one message of
 * the expected type, or by `failed` with an `error`; `exit` ends it.
 */
export class IpcChild<To extends Message, From extends Message> {
  /** `name` prefixes its errors; `stop` kills it when it has not exited `killAfterMs` after `exit`. */
  protected constructor(
    private readonly child: ChildProcess,
    private readonly name: string,
    private readonly killAfterMs: number,
  ) {}

  /** Forks `script` from the repository root, with the advanced (structured clone) serialization. */
  protected static forkTsx(script: string): ChildProcess {
    return fork(script, [], {
      // Explicit: the bench process's own execArgv carries tsx's CLI hooks, which need not apply.
      execArgv: ['--import', 'tsx'],
      cwd: join(dirname(fileURLToPath(import.meta.url)), '..'),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  protected call<T extends From['type']>(message: To, expected: T): Promise<Extract<From, { type: T }>> {
    return new Promise((resolve, reject) => {
      const cleanup = () => {
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
        this.child.off('error', onExit);
      };
      const onMessage = (answer: From) => {
        cleanup();
        if (answer.type === expected) resolve(answer as Extract<From, { type: T }>);
        else {
          const failure = answer.type === 'failed' ? String((answer as Message & { error?: unknown }).error) : undefined;
          reject(new Error(`${this.name}: ${failure ?? `expected ${expected}, got ${answer.type}`}`));
        }
      };
      const onExit = () => {
        cleanup();
        reject(new Error(`${this.name}: the child process exited`));
      };
      this.child.on('message', onMessage);
      this.child.once('exit', onExit);
      this.child.once('error', onExit);
      this.child.send(message);
    });
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.send({ type: 'exit' } satisfies Message);
    const timer = setTimeout(() => this.child.kill(), this.killAfterMs);
    await exited;
    clearTimeout(timer);
  }
}

const clockTicks = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU of a process so far, in ms, from `/proc` (undefined when it is gone). */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) / clockTicks) * 1000;
  } catch {
    return undefined;
  }
}

/** This process's own CPU so far, in ms (all threads). */
export function ownCpuMs(): number {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
}

/** A direct child of this process by command name (DynamoDB Local is a `java` child of the bench process). */
export function childPid(command: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const afterName = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (stat.includes(`(${command})`) && Number(afterName[1]) === process.pid) return Number(entry);
    } catch {
      // The process ended while we looked.
    }
  }
  return undefined;
}

/** Busy CPU time of the whole machine so far, in ms (all cores: user, nice, system, irq, softirq, steal). */
export function machineBusyMs(): number | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
    const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
    return ((user + nice + system + irq + softirq + steal) / clockTicks) * 1000;
  } catch {
    return undefined;
  }
}
