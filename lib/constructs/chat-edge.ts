import { Annotations, Duration, Stack, Token, Validations } from 'aws-cdk-lib';
import type { HttpApi, WebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import { Certificate } from 'aws-cdk-lib/aws-certificatemanager';
import {
  AllowedMethods,
  type BehaviorOptions,
  CachePolicy,
  Distribution,
  Function as EdgeFunction,
  FunctionCode,
  FunctionEventType,
  FunctionRuntime,
  HttpVersion,
  type IOrigin,
  OriginProtocolPolicy,
  OriginRequestPolicy,
  OriginSslPolicy,
  SecurityPolicyProtocol,
  ViewerProtocolPolicy,
} from 'aws-cdk-lib/aws-cloudfront';
import { FunctionUrlOrigin, HttpOrigin, S3BucketOrigin } from 'aws-cdk-lib/aws-cloudfront-origins';
import type { FunctionUrl } from 'aws-cdk-lib/aws-lambda';
import { AaaaRecord, ARecord, HostedZone, RecordTarget } from 'aws-cdk-lib/aws-route53';
import { CloudFrontTarget } from 'aws-cdk-lib/aws-route53-targets';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { CfnWebACL } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { type HttpRoute, ORIGIN_VERIFY_HEADER } from '#wiring';
import { consoleIndexCode, viewerAddressCode, websocketViewerRequestCode } from '../edge-functions/index.ts';
import type { ChatConfig } from '../stacks/chat-config.ts';
import { ChatConsoleSite } from './chat-console-site.ts';

/**
 * How long CloudFront waits for the HTTP API's first byte: the AI routes answer within API Gateway's
 * 29 s integration timeout, and 60 s is the most CloudFront allows without a quota increase.
 */
export const API_ORIGIN_READ_TIMEOUT = Duration.seconds(60);

/** The paths WAF's rate rule watches: sign-in, token minting, webhook verification and the streams (`/rooms/<id>/stream`). */
/** The paths of the API description (`GET /openapi.json`, `GET /docs`, `GET /docs/scalar.js`), cached at the edge. */
export const API_DESCRIPTION_PATHS = ['/openapi.json', '/docs', '/docs/*'] as const;

export const WAF_RATE_LIMITED_PREFIXES = ['/auth/signin', '/auth/token', '/webhooks/verify'] as const;

/** Properties of {@link ChatEdge}. */
export interface ChatEdgeProps {
  readonly config: ChatConfig;
  readonly httpApi: HttpApi;
  readonly webSocketStage: WebSocketStage;
  /** The streaming (`functionUrl`) routes with their function URLs, served under their own paths. */
  readonly streamingRoutes: ReadonlyArray<{ readonly route: HttpRoute; readonly url: FunctionUrl }>;
  /** The value CloudFront sends as {@link ORIGIN_VERIFY_HEADER}. */
  readonly originSecret: ISecret;
}

/**
 * One HTTPS origin for everything a client calls, with the spec's paths: CloudFront in front of the
 * HTTP API (the default behaviour), the WebSocket API (`/ws/*`, rewritten by a CloudFront Function
 * from `/ws/rooms/<roomId>` into the API's `?roomId=` form) and each streaming function URL
 * (`/rooms/*\/stream`, behind origin access control), and the project console's static files
 * (`/console/`, an S3 bucket behind origin access control). The widget script (`/embed.js`) and
 * attachments are routes of the HTTP API, so they come through the default behaviour; the script is
 * cached by the headers its route sends.
 *
 * The origins stay reachable on their own addresses, so they check that a request came through here:
 * the APIs' handlers compare the {@link ORIGIN_VERIFY_HEADER} CloudFront adds (a Secrets Manager value)
 * and refuse others; the function URL takes only requests CloudFront signed (`AWS_IAM` + OAC). Only
 * then do the handlers trust the viewer address a CloudFront Function writes into
 * `x-chat-viewer-address` for the per-IP limits.
 */
export class ChatEdge extends Construct {
  public readonly distribution: Distribution;
  /** `https://<domainName>`, or the distribution's own domain. */
  public readonly baseUrl: string;
  public readonly webAclArn: string | undefined;
  /** The project console's bucket, served under `/console/`. */
  public readonly console: ChatConsoleSite;

  constructor(scope: Construct, id: string, props: ChatEdgeProps) {
    super(scope, id);
    const { config } = props;
    const stack = Stack.of(this);
    const executeApiHost = (apiId: string) => `${apiId}.execute-api.${stack.region}.${stack.urlSuffix}`;
    const originHeaders = { [ORIGIN_VERIFY_HEADER]: props.originSecret.secretValue.unsafeUnwrap() };
    const apiOrigin = (apiId: string, readTimeout?: Duration): IOrigin =>
      new HttpOrigin(executeApiHost(apiId), {
        protocolPolicy: OriginProtocolPolicy.HTTPS_ONLY,
        originSslProtocols: [OriginSslPolicy.TLS_V1_2],
        customHeaders: originHeaders,
        readTimeout,
      });
    // API Gateway and function URLs route by their own Host name: every viewer header but that one.
    const uncached = {
      viewerProtocolPolicy: ViewerProtocolPolicy.HTTPS_ONLY,
      cachePolicy: CachePolicy.CACHING_DISABLED,
      originRequestPolicy: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER,
    } satisfies Partial<BehaviorOptions>;

    const viewerAddress = new EdgeFunction(this, 'ViewerAddress', {
      comment: 'Writes the viewer IP into x-chat-viewer-address for the per-IP limits',
      code: FunctionCode.fromInline(viewerAddressCode()),
      runtime: FunctionRuntime.JS_2_0,
    });
    const websocketRewrite = new EdgeFunction(this, 'WebSocketPaths', {
      comment: 'Maps /ws/rooms/<roomId>, /ws/user/<userId> and /app/<key> onto the WebSocket API stage',
      code: FunctionCode.fromInline(websocketViewerRequestCode(props.webSocketStage.stageName)),
      runtime: FunctionRuntime.JS_2_0,
    });

    const httpOrigin = apiOrigin(props.httpApi.apiId, API_ORIGIN_READ_TIMEOUT);
    const webSocketBehavior: BehaviorOptions = {
      ...uncached,
      origin: apiOrigin(props.webSocketStage.api.apiId),
      allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
      functionAssociations: [{ function: websocketRewrite, eventType: FunctionEventType.VIEWER_REQUEST }],
    };
    const additionalBehaviors: Record<string, BehaviorOptions> = {
      '/ws/*': webSocketBehavior,
      // The Pusher protocol's endpoint, where pusher-js and Laravel Echo connect (`/app/<key>`).
      '/app/*': webSocketBehavior,
      '/embed.js': {
        origin: httpOrigin,
        viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
        // The route sends Cache-Control and a strong ETag: CloudFront keeps the script as long as they say,
        // one entry per query: `?projectId=` decides the answer (a project with the widget off gets 403),
        // so one project's answer must never be served to another.
        cachePolicy: CachePolicy.USE_ORIGIN_CACHE_CONTROL_HEADERS_QUERY_STRINGS,
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
        compress: true,
      },
    };
    // The API description and its reference page: the same for every caller and static per deploy, so
    // the edge keeps them as long as their routes' Cache-Control says (and compresses the 4 MB script).
    const apiDescription: BehaviorOptions = {
      origin: httpOrigin,
      viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      cachePolicy: CachePolicy.USE_ORIGIN_CACHE_CONTROL_HEADERS,
      allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
      compress: true,
    };
    for (const pattern of API_DESCRIPTION_PATHS) additionalBehaviors[pattern] = apiDescription;
    this.console = new ChatConsoleSite(this, 'Console', { stage: config.stage, logRemovalPolicy: config.removalPolicy });
    const consoleIndex = new EdgeFunction(this, 'ConsoleIndex', {
      comment: 'Serves /console/ as console/index.html; /console moves there',
      code: FunctionCode.fromInline(consoleIndexCode()),
      runtime: FunctionRuntime.JS_2_0,
    });
    const consoleBehaviour: BehaviorOptions = {
      origin: S3BucketOrigin.withOriginAccessControl(this.console.bucket),
      viewerProtocolPolicy: ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
      cachePolicy: CachePolicy.USE_ORIGIN_CACHE_CONTROL_HEADERS,
      allowedMethods: AllowedMethods.ALLOW_GET_HEAD,
      responseHeadersPolicy: this.console.responseHeaders,
      functionAssociations: [{ function: consoleIndex, eventType: FunctionEventType.VIEWER_REQUEST }],
      compress: true,
    };
    additionalBehaviors['/console'] = consoleBehaviour;
    additionalBehaviors['/console/*'] = consoleBehaviour;
    for (const { route, url } of props.streamingRoutes) {
      additionalBehaviors[streamingPathPattern(route.path)] = {
        ...uncached,
        // OAC signs with SigV4 in the Authorization header, so the stream's token travels as ?token=.
        origin: FunctionUrlOrigin.withOriginAccessControl(url, { readTimeout: API_ORIGIN_READ_TIMEOUT }),
        allowedMethods: AllowedMethods.ALLOW_GET_HEAD_OPTIONS,
      };
    }

    const certificate = config.certificateArn ? Certificate.fromCertificateArn(this, 'Certificate', config.certificateArn) : undefined;
    this.webAclArn = config.webAclArn ?? (config.waf ? this.webAcl(config).attrArn : undefined);

    this.distribution = new Distribution(this, 'Distribution', {
      comment: `chat-${config.stage}: one base URL for the HTTP API, the WebSocket API and the streams`,
      defaultBehavior: {
        ...uncached,
        origin: httpOrigin,
        allowedMethods: AllowedMethods.ALLOW_ALL,
        functionAssociations: [{ function: viewerAddress, eventType: FunctionEventType.VIEWER_REQUEST }],
      },
      additionalBehaviors,
      domainNames: config.domainName ? [config.domainName] : undefined,
      certificate,
      minimumProtocolVersion: certificate ? SecurityPolicyProtocol.TLS_V1_2_2021 : undefined,
      httpVersion: HttpVersion.HTTP2_AND_3,
      webAclId: this.webAclArn,
    });
    this.baseUrl = `https://${config.domainName ?? this.distribution.distributionDomainName}`;

    if (config.domainName && config.hostedZoneId) {
      const zone = HostedZone.fromHostedZoneAttributes(this, 'Zone', { hostedZoneId: config.hostedZoneId, zoneName: config.domainName });
      const target = RecordTarget.fromAlias(new CloudFrontTarget(this.distribution));
      // A trailing dot: the name as given, whatever the zone's apex is.
      new ARecord(this, 'AliasV4', { zone, recordName: `${config.domainName}.`, target });
      new AaaaRecord(this, 'AliasV6', { zone, recordName: `${config.domainName}.`, target });
    }

    this.acknowledgeNagFindings(config);
  }

  /**
   * A web ACL with one rate-based rule per viewer IP on the routes a client can make costly or
   * guess at; WAF cannot stand in front of an HTTP API or a function URL, only here.
   */
  private webAcl(config: ChatConfig): CfnWebACL {
    const region = Stack.of(this).region;
    if (!Token.isUnresolved(region) && region !== 'us-east-1') {
      throw new Error(
        `waf=true creates a CloudFront web ACL, which AWS keeps in us-east-1, and this stack deploys to ${region}: ` +
          'create the web ACL in us-east-1 and pass its ARN as webAclArn instead (docs/operations.md, "Edge")',
      );
    }
    if (Token.isUnresolved(region)) {
      Annotations.of(this).addWarningV2(
        'chat:edge:wafRegion',
        'waf=true on an environment-agnostic stack: the web ACL deploys only in us-east-1 (elsewhere pass webAclArn)',
      );
    }
    const startsWith = (path: string) => ({
      byteMatchStatement: {
        fieldToMatch: { uriPath: {} },
        positionalConstraint: 'STARTS_WITH',
        searchString: path,
        textTransformations: [{ priority: 0, type: 'NONE' }],
      },
    });
    const streams = {
      andStatement: {
        statements: [
          startsWith('/rooms/'),
          {
            byteMatchStatement: {
              fieldToMatch: { uriPath: {} },
              positionalConstraint: 'ENDS_WITH',
              searchString: '/stream',
              textTransformations: [{ priority: 0, type: 'NONE' }],
            },
          },
        ],
      },
    };
    const visibility = (name: string) => ({ cloudWatchMetricsEnabled: true, metricName: name, sampledRequestsEnabled: true });
    return new CfnWebACL(this, 'WebAcl', {
      scope: 'CLOUDFRONT',
      name: `chat-${config.stage}-edge`,
      description: 'Per-IP rate limit on sign-in, token, webhook verification and stream routes',
      defaultAction: { allow: {} },
      visibilityConfig: visibility(`chat-${config.stage}-edge`),
      rules: [
        {
          name: 'SensitivePathsPerIp',
          priority: 0,
          action: { block: {} },
          visibilityConfig: visibility(`chat-${config.stage}-sensitive-paths`),
          statement: {
            rateBasedStatement: {
              limit: config.wafRateLimit,
              evaluationWindowSec: 300,
              aggregateKeyType: 'IP',
              scopeDownStatement: { orStatement: { statements: [...WAF_RATE_LIMITED_PREFIXES.map(startsWith), streams] } },
            },
          },
        },
      ],
    });
  }

  private acknowledgeNagFindings(config: ChatConfig): void {
    const nag = Validations.of(this.distribution);
    nag.acknowledge({
      id: 'AwsSolutions-CFR1',
      reason: 'A chat service serves its users wherever they are; a deployment that must not can attach its own web ACL (webAclArn).',
    });
    nag.acknowledge({
      id: 'AwsSolutions-CFR3',
      reason:
        'CloudFront standard logs always record the query string, where WebSocket and stream tokens travel (browsers cannot set ' +
        'headers on either): the APIs keep JSON access logs without it, and the functions log every request with its trace id.',
    });
    if (!this.webAclArn) {
      nag.acknowledge({
        id: 'AwsSolutions-CFR2',
        reason:
          'WAF is opt-in (waf=true, or webAclArn): a web ACL bills $5 a month plus its rules, and the handlers rate-limit sign-in, ' +
          'tokens, webhooks and streams themselves.',
      });
    }
    if (!config.domainName) {
      nag.acknowledge({
        id: 'AwsSolutions-CFR4',
        reason:
          "The distribution's own *.cloudfront.net certificate cannot pin a TLS policy; with domainName and certificateArn it " +
          'uses TLSv1.2_2021.',
      });
    }
  }
}

/** The CloudFront path pattern of a route path: `/rooms/{roomId}/stream` → `/rooms/*\/stream`. */
export function streamingPathPattern(path: string): string {
  return path.replace(/\{[^}]+\}/g, '*');
}
