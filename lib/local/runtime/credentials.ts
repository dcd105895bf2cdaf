import { randomBytes } from 'node:crypto';
import { LOCAL_REGION } from '../sqs-local';

export interface LocalCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** Fresh per run: the local `@connections` API admits only requests signed with this key. */
export const runCredentials = (): LocalCredentials => ({
  accessKeyId: `AKIALOCAL${randomBytes(8).toString('hex').toUpperCase()}`,
  secretAccessKey: randomBytes(30).toString('base64url'),
});

/**
 * A SigV4 signer that names the access key and signs nothing. The stand-ins check no signature
 * (DynamoDB Local wants an `Authorization` header naming a key, nothing more), and on AWS the
 * signing CPU is the SDK's, not the service's: measured locally it would be charged to the service.
 */
export function keyNamingSigner(accessKeyId: string) {
  const authorization = `AWS4-HMAC-SHA256 Credential=${accessKeyId}/20000101/${LOCAL_REGION}/local/aws4_request, SignedHeaders=host, Signature=0`;
  return {
    sign: async <T extends { headers: Record<string, string> }>(request: T): Promise<T> => {
      request.headers.authorization = authorization;
      // S3 (the s3rver stand-in) wants the payload's hash named (the unsigned form says none was
      // taken) and a request time within its skew.
      request.headers['x-amz-content-sha256'] ??= 'UNSIGNED-PAYLOAD';
      request.headers['x-amz-date'] ??= new Date().toISOString().replace(/[-:]|\.\d{3}/g, '');
      return request;
    },
  };
}
