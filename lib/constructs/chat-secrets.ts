import { RemovalPolicy, Validations } from 'aws-cdk-lib';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';

/** Properties of {@link ChatSecrets}. */
export interface ChatSecretsProps {
  /** Used in the secret descriptions: `chat-<stage>`. */
  readonly stage: string;
}

/** Everything Secrets Manager may generate, except the lowercase hex digits `a` to `f`. */
const nonHexLowercase = 'ghijklmnopqrstuvwxyz';

/**
 * Secrets the stack generates itself, so that no key ever passes through CDK context, the template
 * or the cloud assembly.
 *
 * `webhookSecretEncryptionKey`: 64 random hex characters (256 bits) for `WEBHOOK_SECRET_ENCRYPTION_KEY`,
 * with which the webhook functions store signing secrets AES-256-GCM encrypted. It is retained
 * whatever the stage, like the table whose items it encrypts: without it those items cannot be
 * read. It is never rotated, because rotating it would make every stored secret unreadable.
 */
export class ChatSecrets extends Construct {
  public readonly webhookSecretEncryptionKey: Secret;

  constructor(scope: Construct, id: string, props: ChatSecretsProps) {
    super(scope, id);

    this.webhookSecretEncryptionKey = new Secret(this, 'WebhookSecretEncryptionKey', {
      description: `chat-${props.stage}: AES-256 key (64 hex characters) that encrypts webhook signing secrets in the table`,
      generateSecretString: {
        passwordLength: 64,
        // Digits plus a-f: punctuation, uppercase, spaces and g-z excluded.
        excludePunctuation: true,
        excludeUppercase: true,
        includeSpace: false,
        excludeCharacters: nonHexLowercase,
        // Uniformly random characters; requiring "each type" would skew the key slightly.
        requireEachIncludedType: false,
      },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.webhookSecretEncryptionKey).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'The secret is a data-encryption key for webhook signing secrets already stored in the table: rotating it ' +
        'would make every stored secret undecryptable, as the handlers keep no key history. Functions get it at ' +
        'deploy time through a dynamic reference; replacing it is a planned re-encryption, not a rotation schedule.',
    });
  }
}
