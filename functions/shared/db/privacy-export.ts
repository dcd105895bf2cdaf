import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { deleteAll, putAll } from './batch';
import { db, tableName } from './client';
import { privacyPk, subjectRef } from './privacy-erasure';
import { queryAll } from './query';

/**
 * A staged GDPR export, too large to answer inline: its JSON text cut into chunks (each well below
 * DynamoDB's 400 KB item limit), in a partition of the subject's exports (named by the subject's
 * reference, not their id), so the subject's erasure deletes every staged export with one Query.
 * Chunks expire (TTL) a minute after the download link; reads skip expired ones before TTL sweeps
 * them.
 */
export const exportChunkItem = z.object({
  pk: z.string(),
  sk: z.string(),
  exportId: z.string(),
  index: z.number().check(z.int()),
  data: z.string(),
  /** Epoch seconds. */
  ttl: z.number().check(z.int()),
});
export type ExportChunkItem = z.infer<typeof exportChunkItem>;

const exportsPk = (projectId: string, ref: string) => `${privacyPk(projectId)}#EXPORTS#${ref}`;
const CHUNK_DIGITS = 6;
const chunkSk = (exportId: string, index: number) => `${exportId}#${String(index).padStart(CHUNK_DIGITS, '0')}`;

/** Stores an export's chunks, in order, all expiring at `ttl`. */
export async function putExportChunks(projectId: string, userId: string, exportId: string, chunks: readonly string[], ttl: number) {
  const pk = exportsPk(projectId, subjectRef(projectId, userId));
  await putAll(chunks.map((data, index) => ({ pk, sk: chunkSk(exportId, index), exportId, index, data, ttl })));
}

/**
 * Chunks `first` to `first + count - 1` of an export (by the subject's reference, which a download
 * link carries instead of the id), in order, in one Query; expired chunks are left out.
 */
export async function exportChunks(
  projectId: string,
  ref: string,
  exportId: string,
  first: number,
  count: number,
): Promise<ExportChunkItem[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':pk': exportsPk(projectId, ref),
        ':from': chunkSk(exportId, first),
        ':to': chunkSk(exportId, first + count - 1),
      },
    }),
  );
  const now = Math.floor(Date.now() / 1000);
  return Items.map((raw) => exportChunkItem.parse(raw)).filter((chunk) => chunk.ttl > now);
}

/** Deletes every staged export of the subject (their erasure); the number of chunks deleted. */
export async function deleteSubjectExports(projectId: string, userId: string): Promise<number> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk',
    ExpressionAttributeValues: { ':pk': exportsPk(projectId, subjectRef(projectId, userId)) },
    ProjectionExpression: 'pk, sk',
  });
  await deleteAll(items.map((item) => ({ pk: item.pk, sk: item.sk })));
  return items.length;
}
