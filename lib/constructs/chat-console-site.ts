import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { DefaultStackSynthesizer, Duration, NestedStack, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { HeadersFrameOption, HeadersReferrerPolicy, ResponseHeadersPolicy } from 'aws-cdk-lib/aws-cloudfront';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { BucketDeployment, CacheControl, Source } from 'aws-cdk-lib/aws-s3-deployment';
import { Construct } from 'constructs';
import { WEB_PAGES } from '../local/gateway/web-pages.ts';
import { PAGE_SECURITY_HEADERS } from '../page-security-headers.ts';
import { bundleBrowserScriptSync } from '../web-bundle.ts';
import { repoRoot } from './chat-function.ts';
import { acknowledgeWildcardStatements } from './nag.ts';

/** Properties of {@link ChatConsoleSite}. */
export interface ChatConsoleSiteProps {
  readonly stage: string;
  /** Of the deployment function's log group, as for every log group of the service. */
  readonly logRemovalPolicy: RemovalPolicy;
}

/**
 * The project console (`web/console/`, docs/console.md) as static files in a private S3 bucket, read
 * by the edge distribution through origin access control under `/console/`, the path the local
 * gateway serves it at: `index.html` and `console.js`, the same bytes `npm run build:console`
 * writes, bundled at synth.
 *
 * The copy into the bucket is CDK's BucketDeployment, a function that runs at deploy time only; it
 * lives in a nested stack of its own (`ConsoleSite`), so the root keeps no function and the areas'
 * stacks keep only the wiring table's. The objects say `no-cache`: CloudFront keeps them and asks S3
 * again with their ETag, so a deploy shows at once without an invalidation.
 */
export class ChatConsoleSite extends Construct {
  public readonly bucket: Bucket;
  /** The nested stack holding CDK's deploy-time copy function. */
  public readonly deployment: NestedStack;
  /** The console's headers: the pages' content security policy, as the local gateway sends it. */
  public readonly responseHeaders: ResponseHeadersPolicy;

  constructor(scope: Construct, id: string, props: ChatConsoleSiteProps) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Bucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      // A build output: the deployment empties the bucket when it is removed, so it can go with the stack.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'Two static files that only CloudFront reads (origin access control); the deploy writes them, nothing else does.',
    });

    const page = WEB_PAGES['/console/'];
    const deployment = new NestedStack(this, 'ConsoleSite', {
      description: `chat-${props.stage}: copies the console build into its bucket`,
    });
    this.deployment = deployment;
    new BucketDeployment(deployment, 'Files', {
      destinationBucket: this.bucket,
      sources: [
        Source.data('console/index.html', readFileSync(path.join(repoRoot, page.html), 'utf8')),
        Source.data(page.script.path.slice(1), bundleBrowserScriptSync(page.script.entry).code),
      ],
      prune: true,
      retainOnDelete: false,
      cacheControl: [CacheControl.noCache()],
      memoryLimit: 256,
      logGroup: new LogGroup(deployment, 'Logs', { retention: RetentionDays.ONE_MONTH, removalPolicy: props.logRemovalPolicy }),
    });
    // By finding, so that anything new in the deployment's role still fails cdk-nag.
    const reason =
      "CDK's BucketDeployment custom resource (a Python function with the AWS CLI layer) runs at deploy time only: it reads " +
      "the build from CDK's asset bucket and writes the console bucket, with the role and managed policy CDK gives it.";
    Validations.of(deployment).acknowledge({
      id: 'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      reason,
    });
    const deploymentGrants = new PolicyStatement({
      actions: ['s3:Abort*', 's3:DeleteObject*', 's3:GetBucket*', 's3:GetObject*', 's3:List*'],
      resources: [this.bucket.arnForObjects('*'), `${assetBucketArn(Stack.of(deployment))}/*`],
    });
    acknowledgeWildcardStatements(deployment, [deploymentGrants], reason);
    Validations.of(deployment).acknowledge({
      id: 'AwsSolutions-L1',
      reason: "The runtime of CDK's BucketDeployment function is chosen by aws-cdk-lib and moves with its upgrades.",
    });

    const csp = PAGE_SECURITY_HEADERS['content-security-policy'];
    this.responseHeaders = new ResponseHeadersPolicy(this, 'Headers', {
      comment: `chat-${props.stage}: the console's content security policy`,
      securityHeadersBehavior: {
        contentSecurityPolicy: { contentSecurityPolicy: csp, override: true },
        contentTypeOptions: { override: true },
        referrerPolicy: { referrerPolicy: HeadersReferrerPolicy.NO_REFERRER, override: true },
        frameOptions: { frameOption: HeadersFrameOption.DENY, override: true },
        strictTransportSecurity: { accessControlMaxAge: Duration.days(365), includeSubdomains: false, override: true },
      },
    });
  }
}

/** The bootstrap bucket CDK's assets deploy from (default synthesizer), as the deployment's grant names it. */
const assetBucketArn = (stack: Stack) =>
  `arn:${stack.partition}:s3:::cdk-${DefaultStackSynthesizer.DEFAULT_QUALIFIER}-assets-${stack.account}-${stack.region}`;
