import { Duration, Validations } from 'aws-cdk-lib';
import { AccessLogField, AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import {
  CfnIntegration,
  CfnIntegrationResponse,
  CfnRoute,
  CfnRouteResponse,
  type CfnStage,
  CorsHttpMethod,
  type CorsPreflightOptions,
  HttpApi,
  HttpMethod,
  HttpRoute,
  HttpRouteKey,
  type HttpStage,
  LogGroupLogDestination,
  WebSocketApi,
  WebSocketRoute,
  WebSocketStage,
} from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpLambdaIntegration, WebSocketLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import {
  type FunctionUrl,
  FunctionUrlAuthType,
  type FunctionUrlCorsOptions,
  InvokeMode,
  HttpMethod as UrlHttpMethod,
} from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct, type IConstruct } from 'constructs';
import {
  type FrameRoute,
  type HttpRoute as HttpRouteEntry,
  ROUTE_SELECTION_FIELD,
  type WebSocketRoute as WebSocketRouteEntry,
} from '#wiring';
import { CORS_MAX_AGE_SECONDS, type CorsRules, corsExposeHeaders, httpApiCors, streamCors } from '../cors.ts';
import type { ChatConfig } from '../stacks/chat-config.ts';
import type { ChatFunction } from './chat-function.ts';

/**
 * Timeout of the functions behind `functionUrl` routes: Lambda's maximum, 15 minutes. A stream ends
 * itself after `SSE_MAX_DURATION_SECONDS` (840 s by default, `functions/shared/config.ts`), inside
 * this limit, so the client sees a clean end and reconnects with `Last-Event-ID` instead of being
 * cut off by a timeout.
 */
export const streamingRouteTimeout = Duration.minutes(15);

/** The WebSocket API's one stage; part of the callback URL handlers post to. */
export const webSocketStageName = 'prod';

/** Properties of {@link ChatApis}. */
export interface ChatApisProps {
  /** Shared settings: CORS, throttling, log removal. */
  readonly config: ChatConfig;
}

/**
 * The HTTP API and the WebSocket API with their stages, in the root stack. Their routes live in the
 * areas' nested stacks ({@link addHttpRoute}, {@link addWebSocketRoute}), next to the functions they
 * invoke. The root makes each stage wait for the areas that add routes: API Gateway refuses to
 * deploy a WebSocket API without a route, and a stage deployed after its routes starts complete.
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

  constructor(scope: Construct, id: string, props: ChatApisProps) {
    super(scope, id);
    const { config } = props;
    const throttle = { rateLimit: config.throttleRateLimit, burstLimit: config.throttleBurstLimit };

    this.httpApi = new HttpApi(this, 'HttpApi', {
      apiName: `chat-${config.stage}-http`,
      description: 'Chat service REST API (routes from functions/wiring/)',
      // The default stage is added below, because only addStage() accepts access log settings.
      createDefaultStage: false,
      corsPreflight: corsPreflightOf(config.corsAllowOrigins),
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
      // Frames carry `type`; routes keyed on it let API Gateway answer keep-alives without a function.
      routeSelectionExpression: `$request.body.${ROUTE_SELECTION_FIELD}`,
      description: 'Chat service realtime API (routes from functions/wiring/)',
    });
    this.webSocketStage = new WebSocketStage(this, 'WebSocketStage', {
      webSocketApi: this.webSocketApi,
      stageName: webSocketStageName,
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
  }
}

/** A route-level throttle of the HTTP stage. */
export interface RouteThrottle {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/**
 * Throttles the given routes of the HTTP stage below the stage default (`RouteSettings`): API
 * Gateway answers 429 past the limit without invoking the function, so a route's concurrency is
 * bounded by rate × duration + burst without reserving any of the account's Lambda pool.
 */
export function throttleHttpRoutes(httpStage: HttpStage, routeKeys: readonly string[], throttle: RouteThrottle): void {
  if (routeKeys.length === 0) return;
  const stage = httpStage.node.defaultChild as CfnStage;
  // A JSON property of the L1: CloudFormation's own (PascalCase) field names.
  stage.routeSettings = Object.fromEntries(
    routeKeys.map((routeKey) => [routeKey, { ThrottlingRateLimit: throttle.rateLimit, ThrottlingBurstLimit: throttle.burstLimit }]),
  );
}

/**
 * Serves an HTTP route on the shared HTTP API: the route and its Lambda integration are created in
 * `scope` (the area's nested stack), next to the function.
 */
export function addHttpRoute(scope: Construct, httpApi: HttpApi, route: HttpRouteEntry, fn: ChatFunction): HttpRoute {
  const apiRoute = new HttpRoute(scope, `${route.id}Route`, {
    httpApi,
    routeKey: HttpRouteKey.with(route.path, HttpMethod[route.method]),
    integration: new HttpLambdaIntegration(`${route.id}Integration`, fn),
  });
  Validations.of(apiRoute).acknowledge({ id: 'AwsSolutions-APIG4', reason: httpAuthReason(route) });
  return apiRoute;
}

/** Serves a WebSocket route on the shared WebSocket API, created in `scope` next to its function. */
export function addWebSocketRoute(
  scope: Construct,
  webSocketApi: WebSocketApi,
  route: WebSocketRouteEntry,
  fn: ChatFunction,
): WebSocketRoute {
  const apiRoute = new WebSocketRoute(scope, `${route.id}Route`, {
    webSocketApi,
    routeKey: route.routeKey,
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
  return apiRoute;
}

/**
 * The function URL of a `functionUrl` route: `RESPONSE_STREAM`, so the handler's writes reach the
 * client as it makes them (`awslambda.streamifyResponse` in `functions/edge/stream.ts`).
 *
 * Auth type `AWS_IAM` behind the edge distribution (`edge`, the default): only requests CloudFront
 * signed with origin access control reach it, so nobody streams around CloudFront's limits. Without
 * the edge, `NONE`: browsers (EventSource, `fetch` in the SDK) cannot sign requests with SigV4. The
 * handler authenticates every request itself either way, as on the HTTP API: it verifies the user
 * JWT from `?token=` (or `Authorization` where no OAC signature takes that header) with jose
 * (algorithm allow-list, `exp`), applies the route's `minRole` and checks room access before it
 * opens the stream, and answers 401/403/404 otherwise; the same code runs behind the local gateway.
 *
 * CORS: `GET` from the configured origins (`corsAllowOrigins`, every origin by default), with the
 * stream's allowed headers (`lib/cors.ts`); Lambda answers the preflight itself.
 */
export function addStreamingUrl(route: HttpRouteEntry, fn: ChatFunction, config: ChatConfig): FunctionUrl {
  return fn.addFunctionUrl({
    authType: config.edge ? FunctionUrlAuthType.AWS_IAM : FunctionUrlAuthType.NONE,
    invokeMode: InvokeMode.RESPONSE_STREAM,
    cors: functionUrlCorsOf(streamCors(config.corsAllowOrigins, route.method)),
  });
}

/** The HTTP API's CORS settings from the shared policy (`lib/cors.ts`), which the local gateway answers by too. */
function corsPreflightOf(allowOrigins: readonly string[]): CorsPreflightOptions {
  const rules = httpApiCors(allowOrigins);
  return {
    allowHeaders: [...rules.allowHeaders],
    allowMethods: rules.allowMethods.map((method) => CorsHttpMethod[method as keyof typeof CorsHttpMethod]),
    allowOrigins: [...rules.allowOrigins],
    exposeHeaders: [...corsExposeHeaders],
    maxAge: Duration.seconds(CORS_MAX_AGE_SECONDS),
  };
}

/** A streaming function URL's CORS settings from the shared policy (`lib/cors.ts`). */
function functionUrlCorsOf(rules: CorsRules): FunctionUrlCorsOptions {
  return {
    allowedOrigins: [...rules.allowOrigins],
    allowedMethods: rules.allowMethods.map((method) => UrlHttpMethod[method as keyof typeof UrlHttpMethod]),
    allowedHeaders: [...rules.allowHeaders],
    exposedHeaders: [...corsExposeHeaders],
    maxAge: Duration.seconds(CORS_MAX_AGE_SECONDS),
  };
}

/** Why an HTTP route has no API Gateway authorizer, from its `auth` kind in the wiring table. */
function httpAuthReason(route: HttpRouteEntry): string {
  switch (route.auth) {
    case 'none':
      return `${route.method} ${route.path} is public by design (${route.summary}).`;
    case 'operator':
      return `${route.method} ${route.path} requires X-Service-Operator-Key, compared in the handler with the operator-key secret read from Secrets Manager.`;
    default:
      return (
        `${route.method} ${route.path} is authenticated in the handler (auth "${route.auth}": project API key and/or ` +
        'a jose-verified JWT with an algorithm allow-list and exp), the same code path as the local runtime; the ' +
        'tenant comes from the verified credential.'
      );
  }
}

/**
 * A frame API Gateway answers itself (`answer` in the frame table): a MOCK integration whose
 * response template is the answer, behind a two-way route keyed on the frame's type. No function
 * runs, so a keep-alive costs its two WebSocket messages and no invocation. Returns what it created
 * (in `scope` itself, so their logical ids stay put), for the area to order route creation.
 */
export function addGatewayAnsweredFrame(scope: Construct, webSocketApi: WebSocketApi, frame: FrameRoute): IConstruct[] {
  if (!frame.answer) throw new Error(`Frame ${frame.type} has no answer for API Gateway to give`);
  const id = `${frame.type.replace(/(^|[^A-Za-z0-9])([a-z])/g, (_, _separator, letter: string) => letter.toUpperCase())}Frame`;
  const apiId = webSocketApi.apiId;
  // A mock integration answers with the status its request template names; the one template
  // (selected by the constant expression "200") names 200, and the response keyed /200/ answers.
  const integration = new CfnIntegration(scope, `${id}Integration`, {
    apiId,
    integrationType: 'MOCK',
    templateSelectionExpression: '200',
    requestTemplates: { '200': '{"statusCode": 200}' },
    description: `Answers ${frame.type} frames: ${frame.summary}`,
  });
  const answered = new CfnIntegrationResponse(scope, `${id}IntegrationResponse`, {
    apiId,
    integrationId: integration.ref,
    integrationResponseKey: '/200/',
    templateSelectionExpression: '200',
    responseTemplates: { '200': JSON.stringify(frame.answer) },
  });
  // The catch-all: a status the /200/ key does not match still answers the frame rather than
  // leaving the route without an integration response for it.
  const fallback = new CfnIntegrationResponse(scope, `${id}DefaultIntegrationResponse`, {
    apiId,
    integrationId: integration.ref,
    integrationResponseKey: '$default',
    templateSelectionExpression: '200',
    responseTemplates: { '200': JSON.stringify(frame.answer) },
  });
  // One change to the API at a time, as between routes (ROUTE_CREATION_CHAINS).
  fallback.node.addDependency(answered);
  const route = new CfnRoute(scope, `${id}Route`, {
    apiId,
    routeKey: frame.type,
    target: `integrations/${integration.ref}`,
    authorizationType: 'NONE',
    // Two-way: the integration's answer goes back on the socket.
    routeResponseSelectionExpression: '$default',
  });
  const routeResponse = new CfnRouteResponse(scope, `${id}RouteResponse`, { apiId, routeId: route.ref, routeResponseKey: '$default' });
  Validations.of(route).acknowledge({
    id: 'AwsSolutions-APIG4',
    reason:
      'API Gateway accepts authorizers on $connect only: every connection this route hears was authenticated there, ' +
      'and the route returns a constant frame without running anything.',
  });
  return [integration, answered, fallback, route, routeResponse];
}
