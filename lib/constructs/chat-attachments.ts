import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import { BlockPublicAccess, Bucket, BucketEncryption, ObjectOwnership } from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';

/**
 * The attachments bucket (`POST /upload`, voice messages): private (every public access blocked,
 * ACLs off), S3-managed encryption, TLS only, and a lifecycle rule that aborts multipart uploads
 * left unfinished for a day. Objects stay as long as the messages that link them: they leave
 * through GDPR erasure, not by age. Retained on stack deletion and replacement like the table,
 * whose messages point at its objects.
 */
export class ChatAttachments extends Construct {
  public readonly bucket: Bucket;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.bucket = new Bucket(this, 'Bucket', {
      blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
      objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
      encryption: BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      lifecycleRules: [{ id: 'AbortIncompleteMultipartUploads', abortIncompleteMultipartUploadAfter: Duration.days(1) }],
      removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason:
        'Objects are written and read only through the service: every upload and download is a logged request of an ' +
        "API route (access logs, the function's log), and each read is a presigned URL that route made. A server " +
        'access log bucket would record the same requests again, as would CloudTrail data events, which an operator ' +
        'may enable for the bucket (docs/operations.md, "Attachments").',
    });
  }
}
