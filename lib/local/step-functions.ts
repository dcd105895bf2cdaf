import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type StateMachineDefinition, stateMachines } from '#wiring';
import { AwsJsonError, serveAwsJson } from './aws-json';
import type { HandlerHost } from './handlers';
import { LOCAL_REGION } from './sqs-local';

// aws-local-stepfunctions 3 calls Promise.withResolvers, which Node 20 lacks.
const promiseStatics = Promise as unknown as {
  withResolvers?: <T>() => { promise: Promise<T>; resolve: (value: T) => void; reject: (reason?: unknown) => void };
};
promiseStatics.withResolvers ??= <T>() => {
  let resolve!: (value: T) => void;
  let reject!: (reason?: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};
const { StateMachine } = await import('aws-local-stepfunctions');

const ACCOUNT = '000000000000';
export const localStateMachineArn = (id: string) => `arn:aws:states:${LOCAL_REGION}:${ACCOUNT}:stateMachine:chat-${id}`;
export const localFunctionArn = (id: string) => `arn:aws:lambda:${LOCAL_REGION}:${ACCOUNT}:function:${id}`;

/** The ASL file with each `${placeholder}` replaced by a task function's ARN, as CDK's definitionSubstitutions do. */
export function loadDefinition(
  repoRoot: string,
  machine: StateMachineDefinition,
  arnOf: (taskId: string) => string,
): Record<string, unknown> {
  let text = readFileSync(join(repoRoot, machine.definitionFile), 'utf8');
  for (const task of machine.tasks) text = text.replaceAll(`\${${task.placeholder}}`, arnOf(task.id));
  return JSON.parse(text) as Record<string, unknown>;
}

export interface StepFunctionsStats {
  readonly executionsStarted: number;
  readonly executionsRunning: number;
  /** States entered, which is what Standard workflows bill as state transitions. */
  readonly stateTransitions: number;
  readonly executionsFailed: number;
}

export interface LocalStepFunctions {
  readonly endpoint: string;
  /** State machine ARN by its id in the wiring table. */
  readonly arns: Readonly<Record<string, string>>;
  stats(): StepFunctionsStats;
  stop(): Promise<void>;
}

/**
 * The Step Functions stand-in: the very ASL files of the wiring table run in the
 * aws-local-stepfunctions interpreter, behind an endpoint that speaks the Step Functions JSON
 * protocol (`StartExecution`, `DescribeExecution`) for the real `SFNClient`. Task states invoke
 * the task handler modules in-process. Executions live in memory and stop with the runtime.
 */
export async function startLocalStepFunctions(options: { repoRoot: string; handlers: HandlerHost }): Promise<LocalStepFunctions> {
  const machines = new Map<string, { run: (input: unknown) => ReturnType<InstanceType<typeof StateMachine>['run']> }>();
  const arns: Record<string, string> = {};
  for (const machine of stateMachines) {
    const definition = loadDefinition(options.repoRoot, machine, localFunctionArn);
    const interpreter = new StateMachine(definition as never);
    const localHandlers: Record<string, (input: unknown) => Promise<never>> = {};
    for (const [stateName, state] of Object.entries(definition.States as Record<string, { Type: string; Resource?: string }>)) {
      const task = machine.tasks.find((candidate) => state.Type === 'Task' && state.Resource === localFunctionArn(candidate.id));
      if (task) localHandlers[stateName] = async (input) => (await options.handlers.invoke(task.handler, task.id, input)) as never;
    }
    const arn = localStateMachineArn(machine.id);
    arns[machine.id] = arn;
    machines.set(arn, {
      run: (input) => interpreter.run(input as never, { overrides: { taskResourceLocalHandlers: localHandlers }, noThrowOnAbort: true }),
    });
  }

  const executions = new Map<
    string,
    { status: 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'ABORTED'; abort: () => void; startDate: number; output?: unknown; error?: string }
  >();
  let started = 0;
  let transitions = 0;
  let failed = 0;

  function startExecution(body: Record<string, unknown>) {
    const machine = machines.get(String(body.stateMachineArn));
    if (!machine) throw new AwsJsonError('StateMachineDoesNotExist', `No state machine ${String(body.stateMachineArn)}`);
    const input = JSON.parse(typeof body.input === 'string' ? body.input : '{}') as unknown;
    const name = typeof body.name === 'string' ? body.name : randomUUID();
    const executionArn = `${String(body.stateMachineArn).replace(':stateMachine:', ':execution:')}:${name}`;
    // As on AWS, a name is used once (per 90 days): a second start with it is refused.
    if (executions.has(executionArn)) throw new AwsJsonError('ExecutionAlreadyExists', `Execution ${name} already exists`);
    const execution = machine.run(input);
    const record = { status: 'RUNNING' as const, abort: execution.abort, startDate: Date.now() / 1000 };
    executions.set(executionArn, record);
    started++;
    void (async () => {
      for await (const event of execution.eventLogs) if (event.type === 'StateEntered') transitions++;
    })().catch(() => undefined);
    execution.result.then(
      (output) => executions.set(executionArn, { ...record, status: output === null ? 'ABORTED' : 'SUCCEEDED', output }),
      (error: Error) => {
        failed++;
        console.error(`local execution ${executionArn} failed`, error);
        executions.set(executionArn, { ...record, status: 'FAILED', error: error.message });
      },
    );
    return { executionArn, startDate: record.startDate };
  }

  const server = await serveAwsJson('1.0', {
    'AWSStepFunctions.StartExecution': startExecution,
    'AWSStepFunctions.DescribeExecution': (body) => {
      const execution = executions.get(String(body.executionArn));
      if (!execution) throw new AwsJsonError('ExecutionDoesNotExist', 'No such execution');
      return {
        executionArn: body.executionArn,
        status: execution.status,
        startDate: execution.startDate,
        ...(execution.output === undefined ? {} : { output: JSON.stringify(execution.output) }),
        ...(execution.error ? { error: execution.error } : {}),
      };
    },
  });

  return {
    endpoint: server.endpoint,
    arns,
    stats: () => ({
      executionsStarted: started,
      executionsRunning: [...executions.values()].filter((execution) => execution.status === 'RUNNING').length,
      stateTransitions: transitions,
      executionsFailed: failed,
    }),
    stop: async () => {
      for (const execution of executions.values()) if (execution.status === 'RUNNING') execution.abort();
      await server.close();
    },
  };
}
