import { beforeAll, describe, expect, it } from 'vitest';
import { functionEntries } from '#wiring';
import { bucketDefinitions } from '#wiring/bindings';
import { describeAreaStack } from '../../support/chat-stack/area-suite.ts';
import {
  environmentOf,
  functionIdIn,
  grantsOfRole,
  isDeployedWith,
  type Resource,
  roleOfFunction,
  type Synthesized,
  synthesize,
  synthesizedApp,
  viewOfFunction,
} from '../../support/chat-stack/synthesized.ts';

/** The Attachments area's nested stack against its entries in the wiring table (checks: `area-suite.ts`), and the bucket. */
describeAreaStack('Attachments');

let main: Synthesized;

beforeAll(() => {
  main = synthesizedApp();
}, 120_000);

/** The attachments bucket (the edge's console bucket is the other: test/infra/chat-stack/edge.test.ts). */
const bucketOf = (synth: Synthesized) =>
  Object.entries(synth.rootResources).filter(
    ([id, resource]) => resource.Type === 'AWS::S3::Bucket' && synth.rootNames.get(id) === 'attachments bucket',
  ) as [string, Resource][];

describe('the attachments bucket', () => {
  it('is private, S3-encrypted, aborts abandoned multipart uploads after a day, and is retained like the table', () => {
    const [[, bucket] = ['', undefined]] = bucketOf(main);

    expect(bucketOf(main)).toHaveLength(1);
    expect(bucket?.Properties.PublicAccessBlockConfiguration).toEqual({
      BlockPublicAcls: true,
      BlockPublicPolicy: true,
      IgnorePublicAcls: true,
      RestrictPublicBuckets: true,
    });
    expect(bucket?.Properties.OwnershipControls).toEqual({ Rules: [{ ObjectOwnership: 'BucketOwnerEnforced' }] });
    expect(bucket?.Properties.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }],
    });
    expect(bucket?.Properties.LifecycleConfiguration).toEqual({
      Rules: [{ Id: 'AbortIncompleteMultipartUploads', AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 }, Status: 'Enabled' }],
    });
    expect([bucket?.DeletionPolicy, bucket?.UpdateReplacePolicy]).toEqual(['RetainExceptOnCreate', 'Retain']);
  });

  it('denies every request without TLS', () => {
    const [[bucketId] = ['']] = bucketOf(main);
    const policies = Object.values(main.rootResources).filter(
      (resource) => resource.Type === 'AWS::S3::BucketPolicy' && resource.Properties.Bucket.Ref === bucketId,
    );

    expect(policies).toHaveLength(1);
    expect(policies[0]?.Properties.Bucket).toEqual({ Ref: bucketId });
    expect(policies[0]?.Properties.PolicyDocument.Statement).toContainEqual(
      expect.objectContaining({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
    );
  });

  it('is bound (variable and grants) to exactly the functions whose entries name it', () => {
    const bound = functionEntries.filter((entry) => entry.bindings.some((binding) => binding.startsWith('bucket:attachments:')));

    expect(bound.map((entry) => entry.id).sort()).toEqual(
      ['EraseSubject', 'ExportSubjectData', 'GetAttachment', 'SendVoiceMessage', 'UploadAttachment', 'VoiceTranscriber'].sort(),
    );
    for (const entry of functionEntries) {
      const view = viewOfFunction(entry, main);
      const id = functionIdIn(view, entry.id);
      const s3Grants = grantsOfRole(view, roleOfFunction(view, id)).filter((grant) => grant.startsWith('s3:'));
      const isBound = bound.includes(entry);
      expect(bucketDefinitions.attachments.variable in environmentOf(view, id), entry.id).toBe(isBound);
      expect(s3Grants.length > 0, entry.id).toBe(isBound);
      if (isBound)
        expect(s3Grants.every((grant) => grant.endsWith('<attachments bucket>.Arn/*') || grant.endsWith('<attachments bucket>.Arn'))).toBe(
          true,
        );
    }
  });

  it('is left out with attachmentsEnabled=false: no bucket, no variable, no S3 grant', () => {
    const without = synthesize({ nagChecks: false }, { attachmentsEnabled: 'false' });

    expect(bucketOf(without)).toEqual([]);
    for (const entry of functionEntries.filter((candidate) => isDeployedWith(candidate))) {
      const view = viewOfFunction(entry, without);
      const id = functionIdIn(view, entry.id);
      expect(Object.keys(environmentOf(view, id)), entry.id).not.toContain(bucketDefinitions.attachments.variable);
      expect(
        grantsOfRole(view, roleOfFunction(view, id)).filter((grant) => grant.startsWith('s3:')),
        entry.id,
      ).toEqual([]);
    }
  });
});
