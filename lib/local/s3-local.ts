import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const require = createRequire(import.meta.url);

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  readonly httpServer?: { closeAllConnections?: () => void };
}
interface AwsAccountModule {
  readonly DUMMY_ACCOUNT: { createKeyPair(accessKeyId: string, secretAccessKey: string): void };
}

export interface S3Local {
  /** The S3 API (`AWS_ENDPOINT_URL_S3` of the handlers), buckets by path. */
  readonly endpoint: string;
  /** Bucket names the stand-in created. */
  readonly buckets: { readonly attachments: string };
  stop(): Promise<void>;
}

export const LOCAL_ATTACHMENTS_BUCKET = 'chat-attachments';

/**
 * The S3 stand-in: `s3rver` on a free loopback port, its objects as files under `dataDir/s3` (so a
 * restart of the runtime keeps them, as DynamoDB Local keeps its table), or under a temporary
 * folder removed on stop when the runtime runs in memory. It takes the run's access key (s3rver
 * checks the key a request names, not its SigV4 signature), and serves presigned GET URLs with
 * S3's `response-*` header overrides.
 */
export async function startS3Local(options: {
  readonly dataDir?: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}): Promise<S3Local> {
  const S3rver = require('s3rver') as new (options: Record<string, unknown>) => S3rverInstance;
  const account = require('s3rver/lib/models/account') as AwsAccountModule;
  account.DUMMY_ACCOUNT.createKeyPair(options.accessKeyId, options.secretAccessKey);
  const temporary = options.dataDir ? undefined : mkdtempSync(join(tmpdir(), 'chat-s3-'));
  const directory = options.dataDir ? resolve(options.dataDir, 's3') : (temporary as string);
  mkdirSync(directory, { recursive: true });
  const server = new S3rver({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    // Path-style requests only: a virtual-host name would need DNS for <bucket>.127.0.0.1.
    vhostBuckets: false,
    configureBuckets: [{ name: LOCAL_ATTACHMENTS_BUCKET }],
  });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    buckets: { attachments: LOCAL_ATTACHMENTS_BUCKET },
    stop: async () => {
      server.httpServer?.closeAllConnections?.();
      await server.close();
      if (temporary) rmSync(temporary, { recursive: true, force: true });
    },
  };
}
