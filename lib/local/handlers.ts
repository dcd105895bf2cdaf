import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import type { Context } from 'aws-lambda';
import { installAwsLambdaGlobal, isStreamingHandler } from './streaming';

export type LambdaHandler = (event: unknown, contextOrStream: Context | Writable, context?: Context) => Promise<unknown>;

/** A Lambda context good enough for our handlers: ids, names and a 30 s deadline. */
export function lambdaContext(functionName: string): Context {
  const deadline = Date.now() + 30_000;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:local:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}

/**
 * Loads handler modules (paths relative to `functions/`, as in the wiring table) in this process,
 * once each, and invokes them the way Lambda would: the gateway, the queue consumers and the state
 * machine interpreter all go through here.
 */
export interface HandlerStats {
  readonly invocations: number;
  readonly durationMs: number;
  readonly running: number;
  /** Invocations by function name (the wiring table's id). */
  readonly byFunction: Readonly<Record<string, number>>;
}

export class HandlerHost {
  private readonly loaded = new Map<string, Promise<LambdaHandler>>();
  /**
   * Invocations and their wall time, as Lambda's `Invocations` and `Duration` metrics count them,
   * and how many are running now (Lambda's `ConcurrentExecutions`).
   */
  private readonly counters = { invocations: 0, durationMs: 0, running: 0 };
  /** Invocations per function name, as Lambda's per-function `Invocations` metric counts them. */
  private readonly invocationsByFunction = new Map<string, number>();

  constructor(private readonly functionsDir: string) {
    installAwsLambdaGlobal();
  }

  load(file: string): Promise<LambdaHandler> {
    let handler = this.loaded.get(file);
    if (!handler) {
      handler = import(pathToFileURL(join(this.functionsDir, file)).href).then((module: { handler?: LambdaHandler }) => {
        if (typeof module.handler !== 'function') throw new Error(`${file} does not export a handler`);
        return module.handler;
      });
      this.loaded.set(file, handler);
    }
    return handler;
  }

  async invoke(file: string, functionName: string, event: unknown): Promise<unknown> {
    const handler = await this.load(file);
    return this.timed(functionName, () => handler(event, lambdaContext(functionName)));
  }

  stats(): HandlerStats {
    return { ...this.counters, byFunction: Object.fromEntries(this.invocationsByFunction) };
  }

  private async timed<T>(functionName: string, run: () => Promise<T>): Promise<T> {
    this.invocationsByFunction.set(functionName, (this.invocationsByFunction.get(functionName) ?? 0) + 1);
    const started = performance.now();
    this.counters.running++;
    try {
      return await run();
    } finally {
      this.counters.running--;
      this.counters.invocations++;
      this.counters.durationMs += performance.now() - started;
    }
  }

  /** Invokes a response-streaming handler (`awslambda.streamifyResponse`) with the stream it writes to. */
  async invokeStreaming(file: string, functionName: string, event: unknown, responseStream: Writable): Promise<void> {
    const handler = await this.load(file);
    if (!isStreamingHandler(handler)) throw new Error(`${file} is served by a function URL but is not a streaming handler`);
    await this.timed(functionName, () => handler(event, responseStream, lambdaContext(functionName)));
  }
}
