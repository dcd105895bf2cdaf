/**
 * The bench process's handle on a receivers child (bench/realtime/receivers.ts), and the CPU
 * readings of the processes that make up a server under test.
 */
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FromReceivers, ProbeResult, RunResult, RunSpec, TargetConfig, ToReceivers, Workload } from './protocol';

type Answer<T extends FromReceivers['type']> = Extract<FromReceivers, { type: T }>;

export class ReceiversProcess {
  private constructor(private readonly child: ChildProcess) {}

  static async start(target: TargetConfig): Promise<ReceiversProcess> {
    const here = dirname(fileURLToPath(import.meta.url));
    const child = fork(join(here, 'receivers.ts'), [], {
      // Explicit: the bench process's own execArgv carries tsx's CLI hooks, which need not apply.
      execArgv: ['--import', 'tsx'],
      cwd: join(here, '..', '..'),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    const receivers = new ReceiversProcess(child);
    await receivers.call({ type: 'configure', target }, 'configured');
    return receivers;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  private call<T extends FromReceivers['type']>(message: ToReceivers, expected: T): Promise<Answer<T>> {
    return new Promise((resolve, reject) => {
      const cleanup = () => {
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
        this.child.off('error', onExit);
      };
      const onMessage = (answer: FromReceivers) => {
        cleanup();
        if (answer.type === expected) resolve(answer as Answer<T>);
        else reject(new Error(answer.type === 'failed' ? answer.error : `receivers: expected ${expected}, got ${answer.type}`));
      };
      const onExit = () => {
        cleanup();
        reject(new Error('receivers: the child process exited'));
      };
      this.child.on('message', onMessage);
      this.child.once('exit', onExit);
      this.child.once('error', onExit);
      this.child.send(message);
    });
  }

  /** Grows the room to `receivers` (the sender first); resolves with the time it took. */
  async connect(receivers: number, options: { concurrency: number; timeoutMs: number }): Promise<number> {
    return (await this.call({ type: 'connect', receivers, ...options }, 'connected')).ms;
  }

  async quiet(quietMs: number, maxMs: number): Promise<Answer<'quiet'>> {
    return this.call({ type: 'quiet', quietMs, maxMs }, 'quiet');
  }

  async verify(options: { timeoutMs: number; rounds: number; concurrency: number }): Promise<Answer<'verified'>> {
    return this.call({ type: 'verify', ...options }, 'verified');
  }

  async run(run: RunSpec): Promise<RunResult> {
    return (await this.call({ type: 'run', run }, 'ran')).result;
  }

  async probe(id: number, workload: Workload, timeoutMs: number): Promise<ProbeResult> {
    return (await this.call({ type: 'probe', id, workload, timeoutMs }, 'probed')).result;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.send({ type: 'exit' } satisfies ToReceivers);
    const timer = setTimeout(() => this.child.kill(), 5000);
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
