import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import {
  type AutoFlag,
  type BlockListItem,
  blockListKey,
  findBlockList,
  newestModerationRecords,
  putAutoFlag,
  putBlockList,
  toModerationRecord,
} from '#shared/db/moderation';

export const MAX_BLOCK_LIST_TERMS = 1000;
export const MAX_TERM_LENGTH = 200;

const cache = new TtlCache<readonly string[]>(config.CACHE_TTL_MS);

export async function getBlockList(projectId: string): Promise<{ terms: string[]; updatedAt: string | null }> {
  const item = await findBlockList(projectId);
  return { terms: item?.terms ?? [], updatedAt: item?.updatedAt ?? null };
}

/** Replaces the list; terms are trimmed, lower-cased and de-duplicated so matching stays one pass. */
export async function replaceBlockList(projectId: string, terms: readonly string[], updatedBy: string) {
  const normalized = [...new Set(terms.map((term) => term.trim().toLowerCase()).filter(Boolean))];
  const item: BlockListItem = { ...blockListKey(projectId), terms: normalized, updatedAt: new Date().toISOString(), updatedBy };
  await putBlockList(item);
  cache.delete(projectId);
  return { terms: normalized, updatedAt: item.updatedAt };
}

/** The first block-list term the content contains, case-insensitively. */
export async function findBlockedTerm(projectId: string, content: string): Promise<string | undefined> {
  let terms = cache.get(projectId);
  if (!terms) {
    terms = (await getBlockList(projectId)).terms;
    cache.set(projectId, terms);
  }
  if (terms.length === 0) return undefined;
  const haystack = content.toLowerCase();
  return terms.find((term) => haystack.includes(term));
}

/** Records a flagged message for moderators and in the automation log, as of now. */
export async function recordAutoFlag(flag: AutoFlag): Promise<void> {
  await putAutoFlag(flag, new Date().toISOString());
}

export async function listAutoFlags(projectId: string, limit: number) {
  return (await newestModerationRecords(projectId, limit)).map(toModerationRecord);
}
