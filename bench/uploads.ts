/**
 * Uploads: 1 MiB files through `POST /upload` of the local runtime (the gateway's HTTP, the
 * handler's base64 event, the checks and sniffing, a PutObject to the S3 stand-in) beside a direct
 * `PutObject` of the same bytes to the same s3rver from this process, in the same run: throughput
 * (MB/s) and latency at 1 and 4 uploads at once. The direct PutObject is the baseline: what storing
 * the file costs without the service.
 */
import { randomBytes } from 'node:crypto';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Bench, Context } from './harness';
import { loadAverage } from './harness';
import { createProject, latencySummary, round } from './util';

const FILE_BYTES = 1024 * 1024;
const UPLOADS = 48;
const WARMUP = 4;
const CONCURRENCIES = [1, 4] as const;
const GOAL_RATIO = 0.7;

/** A 1×1 PNG, then random bytes up to the size: what the sniffer reads as image/png, and what no compression shrinks. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const fileBytes = () => Buffer.concat([PNG, randomBytes(FILE_BYTES - PNG.length)]);

interface Side {
  readonly mbPerSecond: number;
  readonly latencyMs: ReturnType<typeof latencySummary>;
}

/** Runs `UPLOADS` calls `concurrency` at a time; MB/s over the wall time of the whole batch. */
async function measureSide(concurrency: number, once: (bytes: Buffer) => Promise<void>): Promise<Side> {
  const files = Array.from({ length: UPLOADS }, fileBytes);
  for (let index = 0; index < WARMUP; index++) await once(fileBytes());
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < files.length) {
        const file = files[next++] as Buffer;
        const before = performance.now();
        await once(file);
        latencies.push(performance.now() - before);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return { mbPerSecond: round((UPLOADS * FILE_BYTES) / 1e6 / seconds, 1), latencyMs: latencySummary(latencies) };
}

async function measure({ service, log }: Context) {
  const { runtime, api } = service;
  if (!runtime.s3Endpoint || !runtime.attachmentsBucket) throw new Error('uploads bench: the runtime has no S3 stand-in');
  const project = await createProject(api, 'uploads-bench');
  const token = await project.token('uploads-bench-user');
  const direct = new S3Client({
    endpoint: runtime.s3Endpoint,
    region: runtime.env.AWS_REGION,
    forcePathStyle: true,
    credentials: { accessKeyId: runtime.env.AWS_ACCESS_KEY_ID as string, secretAccessKey: runtime.env.AWS_SECRET_ACCESS_KEY as string },
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });
  const throughService = async (bytes: Buffer) => {
    const response = await fetch(`${runtime.baseUrl}/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'image/png' },
      body: new Uint8Array(bytes),
    });
    const text = await response.text();
    if (response.status !== 201) throw new Error(`uploads bench: POST /upload answered ${response.status} ${text}`);
  };
  const putDirectly = async (bytes: Buffer) => {
    await direct.send(
      new PutObjectCommand({
        Bucket: runtime.attachmentsBucket,
        Key: `bench/${randomBytes(16).toString('base64url')}/file.png`,
        Body: bytes,
        ContentType: 'image/png',
      }),
    );
  };
  const loadAtStart = loadAverage();
  const rows = [];
  try {
    for (const concurrency of CONCURRENCIES) {
      const service = await measureSide(concurrency, throughService);
      const baseline = await measureSide(concurrency, putDirectly);
      const ratio = round(service.mbPerSecond / baseline.mbPerSecond, 2);
      log(
        `  ${concurrency} at once: POST /upload ${service.mbPerSecond} MB/s (p99 ${service.latencyMs.p99} ms), PutObject ${baseline.mbPerSecond} MB/s (p99 ${baseline.latencyMs.p99} ms): ${ratio} ×`,
      );
      rows.push({ concurrency, service, baseline, ratio });
    }
  } finally {
    direct.destroy();
  }
  return { fileBytes: FILE_BYTES, uploads: UPLOADS, rows, loadAverage: { start: loadAtStart, end: loadAverage() } };
}

type Uploads = Awaited<ReturnType<typeof measure>>;

export const uploads: Bench<Uploads> = {
  id: 'uploads',
  name: 'Uploads',
  needs: 'service',
  run: measure,

  goals: (result) => [
    {
      id: 'upload-throughput-ratio',
      name: 'POST /upload throughput of 1 MiB files against a direct PutObject to the same S3 stand-in, one at a time',
      target: `≥ ${GOAL_RATIO} ×`,
      measured: `${result.rows[0]?.ratio} × (${result.rows.map((row) => `${row.concurrency} at once: ${row.ratio} ×`).join(', ')})`,
      pass: (result.rows[0]?.ratio ?? 0) >= GOAL_RATIO,
    },
  ],

  section(result) {
    const lines = result.rows
      .map(
        (row) =>
          `| ${row.concurrency} | ${row.service.mbPerSecond} MB/s | ${row.service.latencyMs.p50} / ${row.service.latencyMs.p99} ms | ${row.baseline.mbPerSecond} MB/s | ${row.baseline.latencyMs.p50} / ${row.baseline.latencyMs.p99} ms | ${row.ratio} × |`,
      )
      .join('\n');
    return `## Uploads

${result.uploads} files of ${result.fileBytes} bytes (a 1×1 PNG followed by random bytes) through \`POST /upload\` of the local runtime (the gateway, the handler's base64 event, the size, type and signature checks, a \`PutObject\` to s3rver through \`@aws-sdk/client-s3\`), beside a direct \`PutObject\` of the same bytes to the same s3rver from the bench process, in the same run, after ${WARMUP} warm-up uploads each. MB/s is the batch's bytes over its wall time; latency is per upload. Goal: the service keeps at least ${GOAL_RATIO} × the direct throughput. 1-minute load average ${result.loadAverage.start} at the start of this section and ${result.loadAverage.end} at its end (other work shared the machine when it is far above 0.5).

| At once | \`POST /upload\` | p50 / p99 | direct \`PutObject\` | p50 / p99 | ratio |
| --- | --- | --- | --- | --- | --- |
${lines}

What the service adds per upload: the body read twice more (the gateway's buffer, the event's base64 text, decoded back), the token check, the rate limit's window write (one DynamoDB UpdateItem), the signature sniffing of the first bytes, and the HTTP hop from the client to the gateway; the S3 write itself is the same request.`;
  },
};
