import { Duration, Validations } from 'aws-cdk-lib';
import { AccessLogField, AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  CorsHttpMethod,
  HttpApi,
  HttpMethod,
  type HttpStage,
  LogGroupLogDestination,
  WebSocketApi,
  WebSocketStage,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration, WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import { type FunctionUrl, FunctionUrlAuthType, InvokeMode, HttpMethod as UrlHttpMethod } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { type HttpRoute, httpRoutes, webSocketRoutes } from '../routes.ts';
import type { ChatConfig } from '../stacks/chat-config.ts';
import { sharedEnvironment } from '../stacks/chat-config.ts';
import { ChatFunction, type ChatResources } from './chat-function.ts';

/** Request headers browsers may send cross-origin; the handlers read all of them. */
export const corsAllowHeaders = ['Authorization', 'Content-Type', 'X-Service-Api-Key', 'X-Service-Operator-Key', 'X-Trace-Id'] as const;

/**
 * Request headers a browser may send cross-origin to a streaming route's function URL: the JWT
 * (EventSource cannot set headers, so it may come as `?token=` instead), the resume point and the
 * trace id, all read by `functions/shared/stream.ts`.
 */
export const streamCorsAllowHeaders = ['Authorization', 'Last-Event-ID', 'X-Trace-Id'] as const;

/**
 * Timeout of the functions behind `functionUrl` routes: Lambda's maximum, 15 minutes. A stream ends
 * itself after `SSE_MAX_DURATION_SECONDS` (840 s by default, `functions/shared/config.ts`), inside
 * this limit, so the client sees a clean end and reconnects with `Last-Event-ID` instead of being
 * cut off by a timeout.
 */
export const streamingRouteTimeout = Duration.minutes(15);

/** Properties of {@link ChatApis}. */
export interface ChatApisProps {
  /**
   * What the routes' `access` lists refer to (table, events queue, webhook state machine, webhook
   * secret encryption key); the WebSocket stage built here is added for `connections:manage`.
   */
  readonly resources: Omit<ChatResources, 'webSocketStage'>;
  /** Shared settings: environment variables, CORS, throttling, log removal. */
  readonly config: ChatConfig;
}

/**
 * The HTTP API and the WebSocket API, with one {@link ChatFunction} per route of `lib/routes.ts`
 * and grants taken from each route's `access` list.
 *
 * An HTTP route is served where its `transport` says: on the HTTP API (the default), or, for
 * `functionUrl` routes (server-sent events, which HTTP APIs cannot stream), on a Lambda function
 * URL of its own in `RESPONSE_STREAM` mode, with a timeout of {@link streamingRouteTimeout}. A
 * `functionUrl` route is not added to the HTTP API.
 *
 * Authentication is done in the handlers (JWT with jose, project API keys, the operator key), as the
 * route table's `auth` says, so that the local runtime and AWS share it: no API Gateway authorizers.
 */
export class ChatApis extends Construct {
  public readonly httpApi: HttpApi;
  /** The `$default` stage of the HTTP API, with access logs and throttling. */
  public readonly httpStage: HttpStage;
  public readonly webSocketApi: WebSocketApi;
  /** The WebSocket stage `prod`; its callback URL is `CONNECTIONS_ENDPOINT`. */
  public readonly webSocketStage: WebSocketStage;
  /** The function of every HTTP and WebSocket route, by route id. */
  public readonly functions: ReadonlyMap<string, ChatFunction>;
  /** The function URL of every `functionUrl` route, by route id. */
  public readonly functionUrls: ReadonlyMap<string, FunctionUrl>;

  constructor(scope: Construct, id: string, props: ChatApisProps) {
    super(scope, id);
    const { config } = props;
    const throttle = { rateLimit: config.throttleRateLimit, burstLimit: config.throttleBurstLimit };

    this.httpApi = new HttpApi(this, 'HttpApi', {
      apiName: `chat-${config.stage}-http`,
      description: 'Chat service REST API (routes from lib/routes.ts)',
      // The default stage is added below, because only addStage() accepts access log settings.
      createDefaultStage: false,
      corsPreflight: {
        allowHeaders: [...corsAllowHeaders],
        allowMethods: [
          CorsHttpMethod.GET,
          CorsHttpMethod.POST,
          CorsHttpMethod.PUT,
          CorsHttpMethod.PATCH,
          CorsHttpMethod.DELETE,
          CorsHttpMethod.OPTIONS,
        ],
        allowOrigins: [...config.corsAllowOrigins],
        exposeHeaders: ['X-Trace-Id'],
        maxAge: Duration.days(1),
      },
    });
    const httpAccessLogs = new LogGroup(this, 'HttpApiAccessLogs', {
      retention: RetentionDays.ONE_MONTH,
      removalPolicy: config.removalPolicy,
    });
    this.httpStage = this.httpApi.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle,
      accessLogSettings: {
        destination: new LogGroupLogDestination(httpAccessLogs),
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: AccessLogField.contextRequestId(),
            requestTime: AccessLogField.contextRequestTime(),
            routeKey: AccessLogField.contextRouteKey(),
            status: AccessLogField.contextStatus(),
            sourceIp: AccessLogField.contextIdentitySourceIp(),
            userAgent: AccessLogField.contextIdentityUserAgent(),
            protocol: AccessLogField.contextProtocol(),
            responseLength: AccessLogField.contextResponseLength(),
            responseLatency: AccessLogField.contextResponseLatency(),
            integrationLatency: AccessLogField.contextIntegrationLatency(),
            integrationError: AccessLogField.contextIntegrationErrorMessage(),
          }),
        ),
      },
    });

    this.webSocketApi = new WebSocketApi(this, 'WebSocketApi', {
      apiName: `chat-${config.stage}-ws`,
      description: 'Chat service realtime API (routes from lib/routes.ts)',
    });
    this.webSocketStage = new WebSocketStage(this, 'WebSocketStage', {
      webSocketApi: this.webSocketApi,
      stageName: 'prod',
      autoDeploy: true,
      throttle,
      ...(config.webSocketAccessLogs
        ? {
            accessLogSettings: {
              destination: new LogGroupLogDestination(
                new LogGroup(this, 'WebSocketAccessLogs', {
                  retention: RetentionDays.ONE_MONTH,
                  removalPolicy: config.removalPolicy,
                }),
              ),
              format: AccessLogFormat.custom(
                JSON.stringify({
                  requestId: AccessLogField.contextRequestId(),
                  requestTime: AccessLogField.contextRequestTime(),
                  eventType: AccessLogField.contextEventType(),
                  routeKey: AccessLogField.contextRouteKey(),
                  connectionId: AccessLogField.contextConnectionId(),
                  status: AccessLogField.contextStatus(),
                  sourceIp: AccessLogField.contextIdentitySourceIp(),
                  integrationLatency: AccessLogField.contextIntegrationLatency(),
                }),
              ),
            },
          }
        : {}),
    });
    if (!config.webSocketAccessLogs) {
      Validations.of(this.webSocketStage).acknowledge({
        id: 'AwsSolutions-APIG1',
        reason:
          'WebSocket access logs need the account-wide API Gateway CloudWatch role, which this app must not own ' +
          '(another stack may manage it). Every route is a Lambda function whose structured logs carry the ' +
          'connection and route; set context webSocketAccessLogs=true where the account role exists.',
      });
    }

    const resources: ChatResources = { ...props.resources, webSocketStage: this.webSocketStage };
    const environment = sharedEnvironment(config);
    const functions = new Map<string, ChatFunction>();
    const createFunction = (routeId: string, handlerPath: string, description: string, timeout?: Duration): ChatFunction => {
      const fn = new ChatFunction(this, routeId, {
        handlerPath,
        description,
        timeout,
        environment,
        logRemovalPolicy: config.removalPolicy,
      });
      functions.set(routeId, fn);
      return fn;
    };

    const functionUrls = new Map<string, FunctionUrl>();
    for (const route of httpRoutes) {
      const transport = route.transport ?? 'httpApi';
      const description = `${route.method} ${route.path}: ${route.summary}`;
      if (transport === 'functionUrl') {
        const fn = createFunction(route.id, route.handler, description, streamingRouteTimeout);
        fn.grantAccess(route.access, resources);
        functionUrls.set(route.id, streamingUrl(route, fn, config));
        continue;
      }
      const fn = createFunction(route.id, route.handler, description);
      fn.grantAccess(route.access, resources);
      const [apiRoute] = this.httpApi.addRoutes({
        path: route.path,
        methods: [HttpMethod[route.method]],
        integration: new HttpLambdaIntegration(`${route.id}Integration`, fn),
      });
      if (apiRoute) {
        Validations.of(apiRoute).acknowledge({ id: 'AwsSolutions-APIG4', reason: httpAuthReason(route) });
      }
    }

    for (const route of webSocketRoutes) {
      const fn = createFunction(route.id, route.handler, `WebSocket ${route.routeKey}: ${route.summary}`);
      fn.grantAccess(route.access, resources);
      const apiRoute = this.webSocketApi.addRoute(route.routeKey, {
        integration: new WebSocketLambdaIntegration(`${route.id}Integration`, fn),
      });
      Validations.of(apiRoute).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          route.routeKey === '$connect'
            ? 'The $connect handler verifies the JWT from the query string (jose, algorithm allow-list, exp) and ' +
              'room membership before storing the connection; it rejects the upgrade otherwise, the same code as locally.'
            : `API Gateway does not accept authorizers on ${route.routeKey}: only connections authenticated by $connect exist.`,
      });
    }
    this.functions = functions;
    this.functionUrls = functionUrls;
  }
}

/**
 * The function URL of a `functionUrl` route: `RESPONSE_STREAM`, so the handler's writes reach the
 * client as it makes them (`awslambda.streamifyResponse` in `functions/shared/stream.ts`).
 *
 * Auth type `NONE`: browsers (EventSource, `fetch` in the SDK) cannot sign requests with SigV4,
 * which `AWS_IAM` would demand. The handler authenticates every request itself, as on the HTTP API:
 * it verifies the user JWT from `Authorization` or `?token=` with jose (algorithm allow-list,
 * `exp`), applies the route's `minRole` and checks room access before it opens the stream, and
 * answers 401/403/404 otherwise; the same code runs behind the local gateway.
 *
 * CORS: `GET` from the configured origins (`corsAllowOrigins`, every origin by default), with the
 * {@link streamCorsAllowHeaders}; Lambda answers the preflight itself.
 */
function streamingUrl(route: HttpRoute, fn: ChatFunction, config: ChatConfig): FunctionUrl {
  return fn.addFunctionUrl({
    authType: FunctionUrlAuthType.NONE,
    invokeMode: InvokeMode.RESPONSE_STREAM,
    cors: {
      allowedOrigins: [...config.corsAllowOrigins],
      allowedMethods: [UrlHttpMethod[route.method]],
      allowedHeaders: [...streamCorsAllowHeaders],
      exposedHeaders: ['X-Trace-Id'],
      maxAge: Duration.days(1),
    },
  });
}

/** Why an HTTP route has no API Gateway authorizer, from its `auth` kind in the wiring table. */
function httpAuthReason(route: HttpRoute): string {
  switch (route.auth) {
    case 'none':
      return `${route.method} ${route.path} is public by design (${route.summary}).`;
    case 'operator':
      return `${route.method} ${route.path} requires X-Service-Operator-Key, compared in the handler with CHAT_OPERATOR_KEY; it answers 404 while that is unset.`;
    default:
      return (
        `${route.method} ${route.path} is authenticated in the handler (auth "${route.auth}": project API key and/or ` +
        'a jose-verified JWT with an algorithm allow-list and exp), the same code path as the local runtime; the ' +
        'tenant comes from the verified credential.'
      );
  }
}
