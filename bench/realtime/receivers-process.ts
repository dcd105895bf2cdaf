/** The bench process's handle on a receivers child (bench/realtime/receivers.ts). */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { IpcChild } from '../child-process';
import type { FromReceivers, ProbeResult, RunResult, RunSpec, TargetConfig, ToReceivers, Workload } from './protocol';

type Answer<T extends FromReceivers['type']> = Extract<FromReceivers, { type: T }>;

export class ReceiversProcess extends IpcChild<ToReceivers, FromReceivers> {
  static async start(target: TargetConfig): Promise<ReceiversProcess> {
    const script = join(dirname(fileURLToPath(import.meta.url)), 'receivers.ts');
    const receivers = new ReceiversProcess(ReceiversProcess.forkTsx(script), 'receivers', 5000);
    await receivers.call({ type: 'configure', target }, 'configured');
    return receivers;
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
}
