import type { NestedStack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { functionEntries, httpRoutes, ORIGIN_VERIFY_BINDING, ORIGIN_VERIFY_HEADER, webSocketRoutes } from '#wiring';
import { webSocketStageName } from '../../../lib/constructs/chat-apis.ts';
import {
  API_DESCRIPTION_PATHS,
  API_ORIGIN_READ_TIMEOUT,
  streamingPathPattern,
  WAF_RATE_LIMITED_PREFIXES,
} from '../../../lib/constructs/chat-edge.ts';
import { consoleIndexCode, viewerAddressCode, websocketViewerRequestCode } from '../../../lib/edge-functions/index.ts';
import { PAGE_SECURITY_HEADERS } from '../../../lib/page-security-headers.ts';
import { createChatApp } from '../../../lib/stacks/chat-app.ts';
import { resolveChatConfig } from '../../../lib/stacks/chat-config.ts';
import { streamingRoutes } from '../../support/chat-stack/expectations.ts';
import {
  environmentOf,
  functionIdIn,
  idOf,
  isDeployedWith,
  newApp,
  type Resource,
  render,
  renderWith,
  resourcesOfType,
  type Synthesized,
  synthesize,
  synthesizedApp,
  viewOfFunction,
} from '../../support/chat-stack/synthesized.ts';

/**
 * The CloudFront distribution that gives the service one base URL (`lib/constructs/chat-edge.ts`):
 * its behaviours, origins and policies, what closes the origins around it, and the variants a
 * deployment picks with context (no edge, its own domain, WAF).
 */

/** AWS managed policies, by the ids CloudFront publishes for them. */
const CACHING_DISABLED = '4135ea2d-6df8-44a3-9df3-4b5a84be39ad';
const USE_ORIGIN_CACHE_CONTROL_HEADERS = '83da9c7e-98b4-4e11-a168-04f0df8e2c65';
const USE_ORIGIN_CACHE_CONTROL_HEADERS_QUERY_STRINGS = '4cc15a8a-d715-48a4-82b8-cc0b614638fe';
const ALL_VIEWER_EXCEPT_HOST_HEADER = 'b689b0a8-53d0-40ab-baf2-68738e2966ac';
const ALL_METHODS = ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'];

let main: Synthesized;

interface Behaviour {
  PathPattern?: string;
  TargetOriginId: string;
  AllowedMethods: string[];
  CachePolicyId: string;
  OriginRequestPolicyId?: string;
  ViewerProtocolPolicy: string;
  FunctionAssociations?: Array<{ EventType: string; FunctionARN: unknown }>;
}

const resourcesIn = (synth: Synthesized, type: string) =>
  Object.entries(synth.rootResources).filter(([, resource]) => resource.Type === type) as Array<[string, Resource]>;

function distributionOf(synth: Synthesized) {
  const distributions = resourcesIn(synth, 'AWS::CloudFront::Distribution');
  expect(distributions).toHaveLength(1);
  const [id, resource] = distributions[0] as [string, Resource];
  const config = resource.Properties.DistributionConfig;
  const behaviours = new Map<string, Behaviour>([
    ['default', config.DefaultCacheBehavior as Behaviour],
    ...(config.CacheBehaviors as Behaviour[]).map((behaviour) => [behaviour.PathPattern as string, behaviour] as const),
  ]);
  const origin = (behaviour: Behaviour | undefined) => {
    const found = (config.Origins as Array<Record<string, any>>).find((candidate) => candidate.Id === behaviour?.TargetOriginId);
    expect(found, `origin of ${behaviour?.PathPattern ?? 'the default behaviour'}`).toBeDefined();
    return found as Record<string, any>;
  };
  return { id, config, behaviours, origin };
}

/** The source of the CloudFront Function a behaviour runs on viewer requests. */
function viewerFunctionCode(synth: Synthesized, behaviour: Behaviour | undefined): { code: string; runtime: string } {
  const associations = behaviour?.FunctionAssociations ?? [];
  expect(associations.map((association) => association.EventType)).toEqual(['viewer-request']);
  const functionId = idOf(associations[0]?.FunctionARN);
  const fn = synth.rootResources[functionId]?.Properties as Record<string, any>;
  return { code: fn.FunctionCode, runtime: fn.FunctionConfig.Runtime };
}

const functionsServingTheApis = () => [
  ...httpRoutes.filter((route) => (route.transport ?? 'httpApi') === 'httpApi'),
  ...webSocketRoutes.filter((route) => route.routeKey === '$connect'),
];

beforeAll(() => {
  main = synthesizedApp();
}, 120_000);

describe('the edge distribution (edge: true, the default)', () => {
  it('sends everything without a path of its own to the HTTP API, uncached, with every viewer header but Host', () => {
    const { behaviours, origin } = distributionOf(main);
    const fallback = behaviours.get('default');

    expect(renderWith(main.rootNames, origin(fallback).DomainName)).toBe('<HTTP API>.execute-api.<AWS::Region>.<AWS::URLSuffix>');
    expect(fallback).toMatchObject({
      AllowedMethods: ALL_METHODS,
      CachePolicyId: CACHING_DISABLED,
      OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER,
      ViewerProtocolPolicy: 'https-only',
    });
    // The AI routes answer within API Gateway's 29 s; CloudFront waits up to 60.
    expect(origin(fallback).CustomOriginConfig).toMatchObject({
      OriginProtocolPolicy: 'https-only',
      OriginReadTimeout: API_ORIGIN_READ_TIMEOUT.toSeconds(),
      OriginSSLProtocols: ['TLSv1.2'],
    });
    expect(viewerFunctionCode(main, fallback)).toEqual({ code: viewerAddressCode(), runtime: 'cloudfront-js-2.0' });
  });

  it.each(['/ws/*', '/app/*'])("maps %s onto the WebSocket API's stage with the path-rewriting function", (pattern) => {
    // `/app/<key>` is the Pusher protocol's endpoint: pusher-js cannot name the stage's `?pusherKey=` form.
    const { behaviours, origin } = distributionOf(main);
    const sockets = behaviours.get(pattern);

    expect(renderWith(main.rootNames, origin(sockets).DomainName)).toBe('<WebSocket API>.execute-api.<AWS::Region>.<AWS::URLSuffix>');
    expect(sockets).toMatchObject({
      AllowedMethods: ['GET', 'HEAD'],
      CachePolicyId: CACHING_DISABLED,
      OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER,
    });
    expect(viewerFunctionCode(main, sockets)).toEqual({
      code: websocketViewerRequestCode(webSocketStageName),
      runtime: 'cloudfront-js-2.0',
    });
    expect(origin(sockets)).toBe(origin(behaviours.get('/ws/*')));
  });

  it('adds the origin-verify secret as x-origin-verify to both APIs, and to nothing else', () => {
    const { config, behaviours, origin } = distributionOf(main);
    const headerOf = (candidate: Record<string, any>) =>
      (candidate.OriginCustomHeaders ?? []).map((header: { HeaderName: string; HeaderValue: unknown }) => [
        header.HeaderName,
        renderWith(main.rootNames, header.HeaderValue),
      ]);
    const verified = [[ORIGIN_VERIFY_HEADER, '{{resolve:secretsmanager:<origin-verify secret>:SecretString:::}}']];

    expect(headerOf(origin(behaviours.get('default')))).toEqual(verified);
    expect(headerOf(origin(behaviours.get('/ws/*')))).toEqual(verified);
    // The two APIs, each streaming function URL and the console bucket.
    expect((config.Origins as unknown[]).length).toBe(2 + streamingRoutes.length + 1);
    for (const route of streamingRoutes) expect(headerOf(origin(behaviours.get(streamingPathPattern(route.path))))).toEqual([]);
  });

  it('binds that secret to every function behind the HTTP API and $connect, and to no other', () => {
    const bound = functionEntries.filter((entry) =>
      Object.keys(environmentOf(viewOfFunction(entry), functionIdIn(viewOfFunction(entry), entry.id))).includes('ORIGIN_VERIFY_SECRET_ARN'),
    );

    expect(bound.map((entry) => entry.id).sort()).toEqual(
      functionsServingTheApis()
        .map((entry) => entry.id)
        .sort(),
    );
    expect(functionEntries.filter((entry) => entry.bindings.includes(ORIGIN_VERIFY_BINDING)).length).toBe(bound.length);
  });

  it.each(streamingRoutes)('serves $path from its function URL, which only CloudFront may call, signed (OAC)', (route) => {
    const { id: distributionId, behaviours, origin } = distributionOf(main);
    const stream = behaviours.get(streamingPathPattern(route.path));
    const streamOrigin = origin(stream);
    const [accessControlId] = (streamOrigin.OriginAccessControlId as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'];
    // The root's other permission lets CloudWatch Logs invoke the log subscribers (docs/stats.md).
    const permissions = resourcesIn(main, 'AWS::Lambda::Permission')
      .map(([, resource]) => resource.Properties)
      .filter((permission) => permission.Principal === 'cloudfront.amazonaws.com');
    const [url] = resourcesOfType('AWS::Lambda::Url').filter(
      ({ view, resource }) => render(view, resource.Properties.TargetFunctionArn) === `<${route.id} function>.Arn`,
    );

    expect(stream).toMatchObject({ CachePolicyId: CACHING_DISABLED, OriginRequestPolicyId: ALL_VIEWER_EXCEPT_HOST_HEADER });
    expect(JSON.stringify(streamOrigin.DomainName)).toContain('FunctionUrl');
    expect(main.rootResources[accessControlId]?.Properties.OriginAccessControlConfig).toMatchObject({
      OriginAccessControlOriginType: 'lambda',
      SigningBehavior: 'always',
      SigningProtocol: 'sigv4',
    });
    expect(url?.resource.Properties).toMatchObject({ AuthType: 'AWS_IAM', InvokeMode: 'RESPONSE_STREAM' });
    expect(permissions.map((permission) => [permission.Action, permission.Principal, permission.InvokedViaFunctionUrl]).sort()).toEqual([
      ['lambda:InvokeFunction', 'cloudfront.amazonaws.com', true],
      ['lambda:InvokeFunctionUrl', 'cloudfront.amazonaws.com', undefined],
    ]);
    for (const permission of permissions) {
      expect(JSON.stringify(permission.SourceArn)).toContain(`"Ref":"${distributionId}"`);
      expect(JSON.stringify(permission.FunctionName)).toContain(`${route.id}FunctionUrl`);
    }
  });

  it('caches the embed script by the Cache-Control and ETag its route sends, per query (the project)', () => {
    const { behaviours, origin } = distributionOf(main);

    // With the query string in the cache key: ?projectId= decides between the script and a 403.
    expect(behaviours.get('/embed.js')).toMatchObject({
      CachePolicyId: USE_ORIGIN_CACHE_CONTROL_HEADERS_QUERY_STRINGS,
      AllowedMethods: ['GET', 'HEAD'],
    });
    expect(origin(behaviours.get('/embed.js')).Id).toBe(origin(behaviours.get('default')).Id);
  });

  it.each(API_DESCRIPTION_PATHS)('caches %s (the API description) by the headers its route sends, compressed', (pattern) => {
    const { behaviours, origin } = distributionOf(main);

    expect(behaviours.get(pattern)).toMatchObject({
      CachePolicyId: USE_ORIGIN_CACHE_CONTROL_HEADERS,
      AllowedMethods: ['GET', 'HEAD'],
      Compress: true,
    });
    expect(origin(behaviours.get(pattern)).Id).toBe(origin(behaviours.get('default')).Id);
    // Every route under the patterns is one of the description's: nothing else is cached by accident.
    const covered = httpRoutes.filter(
      (route) => route.path === pattern || (pattern.endsWith('/*') && route.path.startsWith(pattern.slice(0, -1))),
    );
    expect(covered.map((route) => route.id).every((id) => ['GetOpenApi', 'GetApiReference', 'GetApiReferenceScript'].includes(id))).toBe(
      true,
    );
    expect(covered.length).toBeGreaterThan(0);
  });

  it('serves the console from a private bucket through origin access control, with the pages’ content security policy', () => {
    const { id: distributionId, behaviours, origin } = distributionOf(main);
    const [[bucketId] = []] = resourcesIn(main, 'AWS::S3::Bucket').filter(([id]) => main.rootNames.get(id) !== 'attachments bucket');
    const [policy] = resourcesIn(main, 'AWS::S3::BucketPolicy')
      .map(([, resource]) => resource.Properties)
      .filter((properties) => properties.Bucket.Ref === bucketId);
    const allows = policy?.PolicyDocument.Statement.filter((statement: { Effect: string }) => statement.Effect === 'Allow');

    for (const pattern of ['/console', '/console/*']) {
      const site = behaviours.get(pattern) as Behaviour & { ResponseHeadersPolicyId: unknown };
      const siteOrigin = origin(site);
      const headers = main.rootResources[idOf(site.ResponseHeadersPolicyId)]?.Properties.ResponseHeadersPolicyConfig;

      expect(site).toMatchObject({ AllowedMethods: ['GET', 'HEAD'], CachePolicyId: USE_ORIGIN_CACHE_CONTROL_HEADERS });
      expect(idOf(siteOrigin.DomainName)).toBe(bucketId);
      expect(main.rootResources[idOf(siteOrigin.OriginAccessControlId)]?.Properties.OriginAccessControlConfig).toMatchObject({
        OriginAccessControlOriginType: 's3',
        SigningBehavior: 'always',
      });
      expect(viewerFunctionCode(main, site)).toEqual({ code: consoleIndexCode(), runtime: 'cloudfront-js-2.0' });
      expect(headers.SecurityHeadersConfig.ContentSecurityPolicy).toEqual({
        ContentSecurityPolicy: PAGE_SECURITY_HEADERS['content-security-policy'],
        Override: true,
      });
    }
    expect(main.rootResources[bucketId as string]?.Properties.PublicAccessBlockConfiguration).toMatchObject({ BlockPublicPolicy: true });
    expect(allows).toHaveLength(1);
    expect(allows[0]).toMatchObject({ Action: 's3:GetObject', Principal: { Service: 'cloudfront.amazonaws.com' } });
    expect(JSON.stringify(allows[0].Condition)).toContain(`"Ref":"${distributionId}"`);
  });

  it('copies the console build into that bucket at deploy time, from a nested stack of its own', () => {
    const deployment = main.stack.edge?.console.deployment;
    const resources = Object.values(Template.fromStack(deployment as NestedStack).toJSON().Resources as Record<string, Resource>);
    const copy = resources.find((resource) => resource.Type === 'Custom::CDKBucketDeployment');

    expect(copy?.Properties).toMatchObject({ Prune: true, RetainOnDelete: false, SystemMetadata: { 'cache-control': 'no-cache' } });
    expect(copy?.Properties.SourceObjectKeys).toHaveLength(2);
    expect(resources.filter((resource) => resource.Type === 'AWS::Lambda::Function')).toHaveLength(1);
  });

  it('is the address clients get: the BaseUrl output', () => {
    const { id } = distributionOf(main);

    expect(JSON.stringify(main.outputs.BaseUrl?.Value)).toBe(
      JSON.stringify({ 'Fn::Join': ['', ['https://', { 'Fn::GetAtt': [id, 'DomainName'] }]] }),
    );
    expect(main.outputs.DistributionDomainName?.Value).toEqual({ 'Fn::GetAtt': [id, 'DomainName'] });
  });
});

describe('edge: false', () => {
  let direct: Synthesized;

  beforeAll(() => {
    direct = synthesize({ nagChecks: false, config: { edge: false } });
  }, 120_000);

  it('keeps the raw addresses: no distribution, no origin secret, a function URL browsers call unsigned', () => {
    const urls = resourcesOfType('AWS::Lambda::Url', direct);

    expect(resourcesIn(direct, 'AWS::CloudFront::Distribution')).toEqual([]);
    expect(resourcesIn(direct, 'AWS::CloudFront::Function')).toEqual([]);
    expect(Object.keys(direct.outputs)).not.toContain('BaseUrl');
    expect(Object.keys(direct.outputs)).not.toContain('OriginVerifySecretArn');
    expect(urls.map(({ resource }) => resource.Properties.AuthType)).toEqual(urls.map(() => 'NONE'));
    for (const entry of functionEntries.filter((candidate) => isDeployedWith(candidate))) {
      const view = viewOfFunction(entry, direct);
      expect(Object.keys(environmentOf(view, functionIdIn(view, entry.id))), entry.id).not.toContain('ORIGIN_VERIFY_SECRET_ARN');
    }
  });
});

describe('a domain of its own, with WAF', () => {
  const certificateArn = 'arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789';
  let custom: Synthesized;

  beforeAll(() => {
    // nagChecks: an unacknowledged cdk-nag finding would fail this synth.
    custom = synthesize({
      nagChecks: true,
      config: {
        domainName: 'chat.example.com',
        certificateArn,
        hostedZoneId: 'Z0123456789ABCDEFGHIJ',
        waf: true,
        wafRateLimit: 200,
        region: 'us-east-1',
        account: '123456789012',
        alarmEmail: 'ops@example.com',
      },
    });
  }, 120_000);

  it('serves the domain with its certificate, TLS 1.2 at least, and alias records in the zone', () => {
    const { id, config } = distributionOf(custom);
    const records = [...resourcesIn(custom, 'AWS::Route53::RecordSet')].map(([, resource]) => resource.Properties);

    expect(config.Aliases).toEqual(['chat.example.com']);
    expect(config.ViewerCertificate).toEqual({
      AcmCertificateArn: certificateArn,
      MinimumProtocolVersion: 'TLSv1.2_2021',
      SslSupportMethod: 'sni-only',
    });
    expect(records.map((record) => [record.Type, record.Name, record.HostedZoneId]).sort()).toEqual([
      ['A', 'chat.example.com.', 'Z0123456789ABCDEFGHIJ'],
      ['AAAA', 'chat.example.com.', 'Z0123456789ABCDEFGHIJ'],
    ]);
    for (const record of records) expect(JSON.stringify(record.AliasTarget.DNSName)).toContain(id);
    expect(custom.outputs.BaseUrl?.Value).toBe('https://chat.example.com');
  });

  it('puts a web ACL in front whose rate rule blocks a viewer IP on sign-in, tokens, webhook verification and streams', () => {
    const { config } = distributionOf(custom);
    const [[aclId, acl] = []] = resourcesIn(custom, 'AWS::WAFv2::WebACL');
    const rule = acl?.Properties.Rules[0];
    const scoped = rule.Statement.RateBasedStatement.ScopeDownStatement.OrStatement.Statements;

    expect(config.WebACLId).toEqual({ 'Fn::GetAtt': [aclId, 'Arn'] });
    expect(acl?.Properties).toMatchObject({ Scope: 'CLOUDFRONT', DefaultAction: { Allow: {} } });
    expect(rule).toMatchObject({
      Action: { Block: {} },
      Statement: { RateBasedStatement: { Limit: 200, AggregateKeyType: 'IP', EvaluationWindowSec: 300 } },
    });
    expect(scoped.slice(0, WAF_RATE_LIMITED_PREFIXES.length).map((statement: any) => statement.ByteMatchStatement.SearchString)).toEqual([
      ...WAF_RATE_LIMITED_PREFIXES,
    ]);
    expect(scoped.at(-1).AndStatement.Statements.map((statement: any) => statement.ByteMatchStatement.SearchString)).toEqual([
      '/rooms/',
      '/stream',
    ]);
  });

  it('refuses waf=true in a stack outside us-east-1, where a CloudFront web ACL cannot be created', () => {
    expect(() => createChatApp(newApp(), { nagChecks: false, config: { waf: true, region: 'eu-west-1' } })).toThrow(/webAclArn instead/);
  });
});

describe('edge settings', () => {
  it.each([
    [{ edge: false, domainName: 'chat.example.com' }, /need edge=true/],
    [{ domainName: 'chat.example.com' }, /go together/],
    [{ domainName: 'Chat.Example.com', certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/abc' }, /lower-case host name/],
    [{ domainName: 'chat.example.com', certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/abc' }, /in us-east-1/],
    [{ hostedZoneId: 'Z123' }, /needs domainName/],
    [{ waf: true, webAclArn: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/a/b' }, /not both/],
    [{ webAclArn: 'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/a/b' }, /CloudFront-scope/],
    [{ wafRateLimit: 5 }, /from 10/],
  ])('refuse %j', (overrides, message) => {
    expect(() => resolveChatConfig(overrides)).toThrow(message);
  });
});
