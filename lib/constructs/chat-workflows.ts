import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Duration, Validations } from 'aws-cdk-lib';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { type StateMachineDefinition, stateMachines } from '../routes.ts';
import { type ChatConfig, sharedEnvironment } from '../stacks/chat-config.ts';
import { ChatFunction, type ChatResources, repoRoot } from './chat-function.ts';
import { acknowledgeWildcardResources } from './nag.ts';

/** Properties of {@link ChatWorkflows}. */
export interface ChatWorkflowsProps {
  /**
   * What the task functions' `access` lists may refer to. A task cannot ask for `webhooks:start`
   * (the state machine needs its task functions first), nor for `connections:manage` unless a stage
   * is given here.
   */
  readonly resources: ChatResources;
  /** Shared settings: environment variables, log removal. */
  readonly config: ChatConfig;
}

/** A state machine of the wiring table with its task functions. */
export interface ChatWorkflow {
  readonly definition: StateMachineDefinition;
  readonly stateMachine: StateMachine;
  /** The execution log group (`/aws/vendedlogs/states/chat-<stage>-<id>`). */
  readonly logGroup: LogGroup;
  /** The task functions, by task id. */
  readonly tasks: ReadonlyMap<string, ChatFunction>;
}

/** The `${placeholder}`s of an ASL text, as CloudFormation's DefinitionSubstitutions would replace them. */
export function definitionPlaceholders(definitionText: string): Set<string> {
  return new Set([...definitionText.matchAll(/\$\{([^}]*)\}/g)].map((match) => match[1] as string));
}

/**
 * The Step Functions Standard state machines of `lib/routes.ts` (`stateMachines`), with one
 * {@link ChatFunction} per task.
 *
 * The definition is the ASL file itself (`DefinitionBody.fromString` of its text, so the template
 * carries it verbatim, rather than `fromFile`, which uploads it as an S3 asset), with each task's
 * `${placeholder}` left in and mapped to the task function's ARN by `DefinitionSubstitutions`. The
 * local interpreter (`lib/local/step-functions.ts`) loads the same file and substitutes the same
 * placeholders, so both worlds run one definition.
 *
 * Executions log every event (`ALL`) without execution data (inputs and outputs stay out of the
 * logs) and are traced with X-Ray.
 */
export class ChatWorkflows extends Construct {
  /** Every state machine of the wiring table, by id. */
  public readonly all: ReadonlyMap<string, ChatWorkflow>;
  /** Every task function, by task id. */
  public readonly functions: ReadonlyMap<string, ChatFunction>;

  constructor(scope: Construct, id: string, props: ChatWorkflowsProps) {
    super(scope, id);
    const { config } = props;

    const all = new Map<string, ChatWorkflow>();
    const functions = new Map<string, ChatFunction>();
    for (const definition of stateMachines) {
      const definitionText = readFileSync(path.join(repoRoot, definition.definitionFile), 'utf8');
      const placeholders = [...definitionPlaceholders(definitionText)].sort();
      const taskPlaceholders = definition.tasks.map((task) => task.placeholder).sort();
      if (JSON.stringify(placeholders) !== JSON.stringify(taskPlaceholders)) {
        throw new Error(
          `${definition.definitionFile} has the placeholders [${placeholders.join(', ')}] but the tasks of state machine ` +
            `${definition.id} in lib/routes.ts name [${taskPlaceholders.join(', ')}]`,
        );
      }

      const tasks = new Map<string, ChatFunction>();
      for (const task of definition.tasks) {
        const fn = new ChatFunction(this, task.id, {
          handlerPath: task.handler,
          description: `Task ${task.placeholder} of state machine ${definition.id}: ${task.summary}`,
          timeout: Duration.seconds(task.timeoutSeconds),
          environment: sharedEnvironment(config),
          logRemovalPolicy: config.removalPolicy,
        });
        fn.grantAccess(task.access, props.resources);
        tasks.set(task.id, fn);
        functions.set(task.id, fn);
      }

      const logGroup = new LogGroup(this, `${definition.id}Logs`, {
        // The /aws/vendedlogs/ prefix keeps Step Functions from growing the account's (size-limited)
        // CloudWatch Logs resource policy by one entry per log group.
        logGroupName: `/aws/vendedlogs/states/chat-${config.stage}-${definition.id}`,
        retention: RetentionDays.ONE_MONTH,
        removalPolicy: config.removalPolicy,
      });
      const stateMachine = new StateMachine(this, definition.id, {
        stateMachineType: StateMachineType.STANDARD,
        definitionBody: DefinitionBody.fromString(definitionText),
        definitionSubstitutions: Object.fromEntries(
          definition.tasks.map((task) => [task.placeholder, (tasks.get(task.id) as ChatFunction).functionArn]),
        ),
        logs: { destination: logGroup, level: LogLevel.ALL, includeExecutionData: false },
        tracingEnabled: true,
      });
      for (const fn of tasks.values()) {
        acknowledgeWildcardResources(
          stateMachine,
          fn.grantInvoke(stateMachine),
          `lambda:InvokeFunction on "<${fn.node.id} ARN>:*" is the qualified-ARN half of the L2 grantInvoke: ` +
            "versions and aliases of this one task function only. The ASL invokes the function's unqualified ARN.",
        );
      }
      Validations.of(stateMachine).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'Added by the L2 for logging and tracing: the CloudWatch Logs vended-delivery actions (logs:CreateLogDelivery, ' +
          'GetLogDelivery, UpdateLogDelivery, DeleteLogDelivery, ListLogDeliveries, PutResourcePolicy, DescribeResourcePolicies, ' +
          'DescribeLogGroups) and X-Ray (xray:PutTraceSegments, PutTelemetryRecords, GetSamplingRules, GetSamplingTargets) ' +
          'support no resource-level permissions; the service authorization reference lists only "*".',
      });
      all.set(definition.id, { definition, stateMachine, logGroup, tasks });
    }
    this.all = all;
    this.functions = functions;
  }

  /** The state machine with the given id; throws for an id missing from `lib/routes.ts`. */
  public get(id: string): ChatWorkflow {
    const found = this.all.get(id);
    if (!found) throw new Error(`No state machine with id ${id} in lib/routes.ts`);
    return found;
  }
}
