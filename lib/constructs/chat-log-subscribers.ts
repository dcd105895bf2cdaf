import { ArnFormat, type CfnResource, Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import { CfnPermission } from 'aws-cdk-lib/aws-lambda';
import { CfnSubscriptionFilter } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import type { LogSubscriber } from '#wiring';
import type { Binding, BoundResources } from '#wiring/bindings';
import { ChatFunction } from './chat-function.ts';

/** What an area needs to subscribe its log groups to a log subscriber of the root. */
export interface LogDestination {
  readonly id: string;
  readonly filterPattern: string;
  readonly functionArn: string;
}

/** Properties of {@link ChatLogSubscribers}. */
export interface ChatLogSubscribersProps {
  readonly subscribers: readonly LogSubscriber[];
  readonly resources: BoundResources;
  readonly environment: Record<string, string>;
  readonly settings: Readonly<Record<string, string | undefined>>;
  readonly deployed: (bindings: readonly Binding[]) => readonly Binding[];
  readonly logRemovalPolicy: RemovalPolicy;
}

/**
 * The log subscribers of the wiring table, in the root stack: every area's log groups send to them,
 * and an area may reference the root only (docs/architecture.md "Stacks"). One permission per
 * subscriber lets CloudWatch Logs invoke it, for this account and the log groups of this stage's
 * stacks only (their generated names start with the root stack's name); each area adds the
 * subscription filters on its own functions' log groups ({@link subscribeLogGroup}).
 */
export class ChatLogSubscribers extends Construct {
  public readonly functions: ReadonlyMap<string, ChatFunction>;
  public readonly destinations: readonly LogDestination[];
  /** What an area's subscription filters wait for: CloudWatch Logs tries the destination when a filter is created. */
  public readonly permissions: readonly CfnPermission[];

  constructor(scope: Construct, id: string, props: ChatLogSubscribersProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const functions = new Map<string, ChatFunction>();
    const destinations: LogDestination[] = [];
    const permissions: CfnPermission[] = [];
    for (const subscriber of props.subscribers) {
      const fn = new ChatFunction(this, subscriber.id, {
        handlerPath: subscriber.handler,
        description: `Log subscriber ${subscriber.filterPattern}: ${subscriber.summary}`,
        timeout: Duration.seconds(subscriber.timeoutSeconds),
        environment: props.environment,
        logRemovalPolicy: props.logRemovalPolicy,
      });
      fn.bind(props.deployed(subscriber.bindings), props.resources, props.settings);
      permissions.push(
        new CfnPermission(this, `${subscriber.id}InvokedByLogs`, {
          action: 'lambda:InvokeFunction',
          functionName: fn.functionArn,
          principal: 'logs.amazonaws.com',
          sourceAccount: stack.account,
          sourceArn: stack.formatArn({
            service: 'logs',
            resource: 'log-group',
            resourceName: `${stack.stackName}-*`,
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        }),
      );
      functions.set(subscriber.id, fn);
      destinations.push({ id: subscriber.id, filterPattern: subscriber.filterPattern, functionArn: fn.functionArn });
    }
    this.functions = functions;
    this.destinations = destinations;
    this.permissions = permissions;
  }
}

/** Subscribes a function's log group to each destination: one filter per destination (CloudWatch Logs allows two per group). */
export function subscribeLogGroup(fn: ChatFunction, destinations: readonly LogDestination[]): CfnResource[] {
  return destinations.map(
    (destination) =>
      new CfnSubscriptionFilter(fn.node.scope as Construct, `${fn.node.id}${destination.id}Subscription`, {
        logGroupName: fn.logGroupOfFunction.logGroupName,
        filterPattern: destination.filterPattern,
        destinationArn: destination.functionArn,
      }),
  );
}
