import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Aws, Fn, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { DefinitionBody, LogLevel, StateMachine, StateMachineType } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { StateMachineDefinition } from '#wiring';
import { type ChatFunction, repoRoot } from './chat-function.ts';
import { acknowledgeWildcardResources } from './nag.ts';

/** The `${placeholder}`s of an ASL text, as CloudFormation's DefinitionSubstitutions would replace them. */
export function definitionPlaceholders(definitionText: string): Set<string> {
  return new Set([...definitionText.matchAll(/\$\{([^}]*)\}/g)].map((match) => match[1] as string));
}

/** Properties of {@link ChatWorkflow}. */
export interface ChatWorkflowProps {
  readonly definition: StateMachineDefinition;
  /** The task functions, by task id; each task's function ARN replaces its placeholder. */
  readonly tasks: ReadonlyMap<string, ChatFunction>;
  readonly stage: string;
  /** What happens to the execution log group when it leaves the stack. */
  readonly logRemovalPolicy: RemovalPolicy;
}

/**
 * A Step Functions Standard state machine of `functions/wiring/` (`stateMachines`), in its area's stack.
 *
 * The definition is the ASL file itself (`DefinitionBody.fromString` of its text, so the template
 * carries it verbatim, rather than `fromFile`, which uploads it as an S3 asset), with each task's
 * `${placeholder}` left in and mapped to the task function's ARN by `DefinitionSubstitutions`. The
 * local interpreter (`lib/local/step-functions.ts`) loads the same file and substitutes the same
 * placeholders, so both worlds run one definition.
 *
 * Executions log every event (`ALL`) without execution data (inputs and outputs stay out of the
 * logs) and are traced with X-Ray. The log group's name ends in the id of the stack that created
 * it, so a stack re-created after a delete (or a failed first deploy) that left its log group
 * behind makes a new one instead of failing with "already exists".
 */
export class ChatWorkflow extends Construct {
  public readonly definition: StateMachineDefinition;
  public readonly stateMachine: StateMachine;
  /** The execution log group (`/aws/vendedlogs/states/chat-<stage>-<id>-<stack uuid>`). */
  public readonly logGroup: LogGroup;

  constructor(scope: Construct, id: string, props: ChatWorkflowProps) {
    super(scope, id);
    const { definition, tasks } = props;
    this.definition = definition;
    const definitionText = readFileSync(path.join(repoRoot, definition.definitionFile), 'utf8');
    const placeholders = [...definitionPlaceholders(definitionText)].sort();
    const taskPlaceholders = definition.tasks.map((task) => task.placeholder).sort();
    if (JSON.stringify(placeholders) !== JSON.stringify(taskPlaceholders)) {
      throw new Error(
        `${definition.definitionFile} has the placeholders [${placeholders.join(', ')}] but the tasks of state machine ` +
          `${definition.id} in functions/wiring/ name [${taskPlaceholders.join(', ')}]`,
      );
    }
    const functionOf = (taskId: string) => {
      const fn = tasks.get(taskId);
      if (!fn) throw new Error(`State machine ${definition.id} has no function for its task ${taskId}`);
      return fn;
    };

    this.logGroup = new LogGroup(this, 'Logs', {
      // The /aws/vendedlogs/ prefix keeps Step Functions from growing the account's (size-limited)
      // CloudWatch Logs resource policy by one entry per log group.
      logGroupName: `/aws/vendedlogs/states/chat-${props.stage}-${definition.id}-${stackUuid()}`,
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: props.logRemovalPolicy,
    });
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromString(definitionText),
      definitionSubstitutions: Object.fromEntries(definition.tasks.map((task) => [task.placeholder, functionOf(task.id).functionArn])),
      logs: { destination: this.logGroup, level: LogLevel.ALL, includeExecutionData: false },
      tracingEnabled: true,
    });
    for (const task of definition.tasks) {
      const fn = functionOf(task.id);
      acknowledgeWildcardResources(
        this.stateMachine,
        fn.grantInvoke(this.stateMachine),
        `lambda:InvokeFunction on "<${fn.node.id} ARN>:*" is the qualified-ARN half of the L2 grantInvoke: ` +
          "versions and aliases of this one task function only. The ASL invokes the function's unqualified ARN.",
      );
    }
    Validations.of(this.stateMachine).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason:
        'Added by the L2 for logging and tracing: the CloudWatch Logs vended-delivery actions (logs:CreateLogDelivery, ' +
        'GetLogDelivery, UpdateLogDelivery, DeleteLogDelivery, ListLogDeliveries, PutResourcePolicy, DescribeResourcePolicies, ' +
        'DescribeLogGroups) and X-Ray (xray:PutTraceSegments, PutTelemetryRecords, GetSamplingRules, GetSamplingTargets) ' +
        'support no resource-level permissions; the service authorization reference lists only "*".',
    });
  }
}

/** The UUID at the end of `AWS::StackId`: unique to each creation of the stack. */
function stackUuid(): string {
  return Fn.select(2, Fn.split('/', Aws.STACK_ID));
}
