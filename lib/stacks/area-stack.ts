import { Duration, NestedStack, type NestedStackProps } from 'aws-cdk-lib';
import type { HttpApi, WebSocketApi } from 'aws-cdk-lib/aws-apigatewayv2';
import type { Rule } from 'aws-cdk-lib/aws-events';
import type { FunctionUrl } from 'aws-cdk-lib/aws-lambda';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { Construct, IConstruct } from 'constructs';
import { type Area, type FunctionEntry, functionsOf, ORIGIN_VERIFY_BINDING } from '#wiring';
import type { Binding, BoundResources } from '#wiring/bindings';
import {
  addGatewayAnsweredFrame,
  addHttpRoute,
  addStreamingUrl,
  addWebSocketRoute,
  streamingRouteTimeout,
} from '../constructs/chat-apis.ts';
import { addSqsConsumer, addStreamConsumer } from '../constructs/chat-consumers.ts';
import { ChatFunction } from '../constructs/chat-function.ts';
import { type ChatLogSubscribers, subscribeLogGroup } from '../constructs/chat-log-subscribers.ts';
import { AreaAlarms } from '../constructs/chat-observability.ts';
import { type ChatQueue, type StreamFailureQueue, streamFailureQueue } from '../constructs/chat-queues.ts';
import { addSchedule } from '../constructs/chat-schedules.ts';
import { addEventSubscriber } from '../constructs/chat-subscribers.ts';
import { ChatWorkflow } from '../constructs/chat-workflows.ts';
import { isSubscriberEnabled } from '../event-subscriptions.ts';
import { bindingSettings, type ChatConfig, sharedEnvironment } from './chat-config.ts';

/**
 * How many of an area's API routes CloudFormation may create (or replace) at once. Every route,
 * integration and permission is a change to one shared API, and API Gateway answers
 * `ConflictException` (concurrent modification) to many at once: each area lays its routes in
 * this many dependency chains (route i waits for route i - chains), so a stack with 40 routes
 * sends 2 at a time instead of 40. Areas deploy in parallel; each adds at most this many.
 */
export const ROUTE_CREATION_CHAINS = 2;

/**
 * The most batches an AI consumer (a queue consumer or event subscriber bound to `outbound:ai`)
 * may run at once: its event source's maximum concurrency bounds its share of the account's
 * concurrency and of the provider's rate limit without reserving anything.
 */
export const AI_CONSUMER_MAX_CONCURRENCY = 5;

/**
 * Whether a function of the wiring table calls the AI model: it is bound to the provider and its key.
 * A function bound to `outbound:ai` alone only asks whether AI is configured (the room summary
 * scheduler, the voice message route, which queue the model's work for others).
 */
export const callsTheModel = (entry: { readonly bindings: readonly string[] }): boolean =>
  entry.bindings.includes('outbound:ai') && entry.bindings.includes('secret:ai-key');

/**
 * Makes every group of `groups` wait for the group `chains` places before it: at most `chains` of
 * them are created at once, in the order given. Groups are construct subtrees (a route with its
 * integration and permission), so a whole route waits, and its logical ids do not change.
 */
export function chainCreation(groups: readonly (readonly IConstruct[])[], chains: number): void {
  groups.forEach((group, index) => {
    const before = groups[index - chains];
    if (!before) return;
    for (const construct of group) construct.node.addDependency(...before);
  });
}

/** What the root stack shares with every area. */
export interface SharedResources extends Omit<BoundResources, 'stateMachine'> {
  readonly httpApi: HttpApi;
  readonly webSocketApi: WebSocketApi;
  /** The shared queues with their dead-letter queues, by id. */
  readonly sharedQueues: ReadonlyMap<string, ChatQueue>;
  readonly alarmTopic: ITopic;
}

/** Properties of {@link AreaStack}. */
export interface AreaStackProps extends NestedStackProps {
  readonly area: Area;
  readonly shared: SharedResources;
  readonly config: ChatConfig;
  /** The root's log subscribers: each function of the area sends its matching log lines to them. */
  readonly logSubscribers?: ChatLogSubscribers;
}

/**
 * One area of the wiring table as a nested stack: a function per entry (HTTP and WebSocket routes,
 * queue consumers, event subscribers, stream consumers, state machine tasks, schedules) bound to what its
 * entry names, the API routes and function URLs that invoke them, the area's own queues (one per
 * event subscriber), state machines and alarms.
 *
 * An area references the root stack only (CloudFormation passes those values in as parameters of
 * the nested stack), never another area, so areas deploy in parallel after the root's shared
 * resources and one area's resources never count against another's limits.
 */
export class AreaStack extends NestedStack {
  public readonly area: Area;
  /** Every function of the area, by wiring-table id. */
  public readonly functions: ReadonlyMap<string, ChatFunction>;
  /** The function URL of every `functionUrl` route, by route id. */
  public readonly functionUrls: ReadonlyMap<string, FunctionUrl>;
  /** The area's state machines, by id. */
  public readonly workflows: ReadonlyMap<string, ChatWorkflow>;
  /** The area's own queues: one per event subscriber. */
  public readonly queues: readonly ChatQueue[];
  /** The EventBridge rule of each schedule of the area, by wiring-table id. */
  public readonly schedules: ReadonlyMap<string, Rule>;
  /** Where each stream consumer leaves the coordinates of batches it could not process in time. */
  public readonly failureQueues: readonly StreamFailureQueue[];
  public readonly alarms: AreaAlarms;

  constructor(scope: Construct, id: string, props: AreaStackProps) {
    super(scope, id, { description: `${props.area.id} area: ${props.area.summary}`, ...props });
    const { area, shared, config } = props;
    this.area = area;

    const entries = new Map(functionsOf(area).map((entry) => [entry.id, entry]));
    const functions = new Map<string, ChatFunction>();
    const environment = sharedEnvironment(config);
    const create = (entry: FunctionEntry, options: { description: string; timeout?: Duration; reserved?: number }) => {
      if (functions.has(entry.id)) throw new Error(`Two functions have the id ${entry.id} in functions/wiring/`);
      const fn = new ChatFunction(this, entry.id, {
        handlerPath: entry.handler,
        description: options.description,
        timeout: options.timeout ?? (entry.timeoutSeconds ? Duration.seconds(entry.timeoutSeconds) : undefined),
        reservedConcurrentExecutions: options.reserved,
        browserBundle: entry.browserBundle,
        builtFile: entry.builtFile,
        environment,
        logRemovalPolicy: config.removalPolicy,
      });
      functions.set(entry.id, fn);
      return fn;
    };
    const entryOf = (functionId: string) => entries.get(functionId) as FunctionEntry;

    // Task functions come first: their state machines must exist before anything bound to them.
    const workflows = new Map<string, ChatWorkflow>();
    for (const definition of area.stateMachines ?? []) {
      const tasks = new Map(
        definition.tasks.map((task) => [
          task.id,
          create(entryOf(task.id), { description: `Task ${task.placeholder} of state machine ${definition.id}: ${task.summary}` }),
        ]),
      );
      workflows.set(
        definition.id,
        new ChatWorkflow(this, definition.id, { definition, tasks, stage: config.stage, logRemovalPolicy: config.removalPolicy }),
      );
    }
    this.workflows = workflows;
    const resources: BoundResources = {
      ...shared,
      stateMachine: (machineId) => {
        const workflow = workflows.get(machineId);
        if (!workflow)
          throw new Error(`The ${area.id} area binds state machine ${machineId}, which is not one of its own (functions/wiring/)`);
        return workflow.stateMachine;
      },
    };

    const functionUrls = new Map<string, FunctionUrl>();
    const apiRoutes: IConstruct[][] = [];
    for (const route of area.httpRoutes ?? []) {
      const description = `${route.method} ${route.path}: ${route.summary}`;
      if ((route.transport ?? 'httpApi') === 'functionUrl') {
        const fn = create(entryOf(route.id), {
          description,
          timeout: streamingRouteTimeout,
          reserved: route.reservedConcurrency === 'streams' ? config.streamReservedConcurrency : undefined,
        });
        functionUrls.set(route.id, addStreamingUrl(route, fn, config));
      } else {
        const reserved = callsTheModel(entryOf(route.id)) ? config.aiReservedConcurrency : undefined;
        apiRoutes.push([addHttpRoute(this, shared.httpApi, route, create(entryOf(route.id), { description, reserved }))]);
      }
    }
    this.functionUrls = functionUrls;

    for (const route of area.webSocketRoutes ?? []) {
      const fn = create(entryOf(route.id), { description: `WebSocket ${route.routeKey}: ${route.summary}` });
      apiRoutes.push([addWebSocketRoute(this, shared.webSocketApi, route, fn)]);
    }
    for (const frame of (area.frames ?? []).filter((candidate) => candidate.answer)) {
      apiRoutes.push(addGatewayAnsweredFrame(this, shared.webSocketApi, frame));
    }
    chainCreation(apiRoutes, ROUTE_CREATION_CHAINS);

    for (const consumer of [...(area.queueConsumers ?? []), ...(area.eventSubscribers ?? [])]) {
      if (callsTheModel(consumer) && consumer.maxConcurrency > AI_CONSUMER_MAX_CONCURRENCY) {
        throw new Error(
          `${consumer.id} calls the AI model with maxConcurrency ${consumer.maxConcurrency}; AI consumers run at most ` +
            `${AI_CONSUMER_MAX_CONCURRENCY} batches at once (AI_CONSUMER_MAX_CONCURRENCY, lib/stacks/area-stack.ts)`,
        );
      }
    }
    for (const consumer of area.queueConsumers ?? []) {
      const queue = shared.sharedQueues.get(consumer.queue);
      if (!queue) throw new Error(`Consumer ${consumer.id} reads ${consumer.queue}, which is not a shared queue of functions/wiring/`);
      const fn = create(entryOf(consumer.id), { description: `Consumer of the ${consumer.queue} queue: ${consumer.summary}` });
      addSqsConsumer(fn, queue.queue, consumer, queue.visibilityTimeoutSeconds);
    }

    const queues: ChatQueue[] = [];
    // A subscriber whose feature is off at synth (no AI base URL) would only drop every event: not created.
    for (const subscriber of (area.eventSubscribers ?? []).filter((candidate) => isSubscriberEnabled(candidate, config.providerUrls))) {
      const fn = create(entryOf(subscriber.id), { description: `Event subscriber: ${subscriber.summary}` });
      queues.push(addEventSubscriber(this, shared.eventTopic, subscriber, fn));
    }

    const failureQueues: StreamFailureQueue[] = [];
    for (const consumer of area.streamConsumers ?? []) {
      const fn = create(entryOf(consumer.id), { description: `Table stream consumer: ${consumer.summary}` });
      const failures = streamFailureQueue(this, consumer.id);
      addStreamConsumer(fn, shared.table, consumer, failures.queue);
      failureQueues.push(failures);
    }
    this.queues = queues;
    this.failureQueues = failureQueues;

    const rules = new Map<string, Rule>();
    for (const schedule of area.schedules ?? []) {
      const fn = create(entryOf(schedule.id), { description: `Schedule ${schedule.cron}: ${schedule.summary}` });
      rules.set(schedule.id, addSchedule(this, schedule, fn, { DAILY_DIGEST_ENABLED: config.dailyDigestEnabled }));
    }
    this.schedules = rules;

    // The area's log subscribers are the root's (ChatLogSubscribers); the area sends them its log lines.
    const destinations = props.logSubscribers?.destinations ?? [];
    for (const fn of functions.values()) subscribeLogGroup(fn, destinations);

    // Bindings last: every function and state machine of the area exists by now.
    // Without the edge distribution nothing sends the origin header, so no function checks it.
    const deployed = (bindings: readonly Binding[]) =>
      config.edge ? bindings : bindings.filter((binding) => binding !== ORIGIN_VERIFY_BINDING);
    for (const [functionId, fn] of functions) fn.bind(deployed(entryOf(functionId).bindings), resources, bindingSettings(config));
    this.functions = functions;

    // The area's log subscribers run in the root, yet their errors are the area's to watch.
    const ownLogSubscribers = (area.logSubscribers ?? []).flatMap((subscriber) => {
      const fn = props.logSubscribers?.functions.get(subscriber.id);
      return fn ? [[subscriber.id, fn] as const] : [];
    });
    this.alarms = new AreaAlarms(this, 'Alarms', {
      areaId: area.id,
      alarmTopic: shared.alarmTopic,
      functions: new Map([...functions, ...ownLogSubscribers]),
      stateMachines: new Map<string, IStateMachine>([...workflows].map(([machineId, workflow]) => [machineId, workflow.stateMachine])),
      queues,
      failureQueues,
      streamConsumerIds: (area.streamConsumers ?? []).map((consumer) => consumer.id),
    });
  }
}
