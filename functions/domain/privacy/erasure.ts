import type { UserPrincipal } from '#shared/auth';
import * as erasures from '#shared/db/privacy-erasure';
import { newId } from '#shared/ids';
import { logger } from '#shared/logger';
import { type PrivacyArea, privacyAreas } from './areas';
import { gdprSubject, requesterOf } from './subject';

export interface ErasureAnswer {
  readonly erasureId: string;
  readonly status: erasures.ErasureItem['state'];
  readonly steps: Readonly<Record<string, number>>;
  readonly startedAt: string;
  readonly completedAt: string | null;
  readonly attempts: number;
}

/** The steps in the order they run (a stored map keeps none). */
const inStepOrder = (steps: Readonly<Record<string, number>>) =>
  Object.fromEntries(privacyAreas.flatMap((area) => (area.id in steps ? [[area.id, steps[area.id] as number]] : [])));

const toAnswer = (item: erasures.ErasureItem): ErasureAnswer => ({
  erasureId: item.erasureId,
  status: item.state,
  steps: inStepOrder(item.steps),
  startedAt: item.startedAt,
  completedAt: item.completedAt,
  attempts: item.attempts,
});

export interface ErasureOptions {
  /** The areas to run, in order (every area's by default); a test may hand in its own list. */
  readonly areas?: readonly PrivacyArea[];
}

/** `DELETE /gdpr/delete`: erases the token's subject within the caller's project. */
export async function eraseTokenSubject(principal: UserPrincipal): Promise<ErasureAnswer> {
  const subject = gdprSubject(principal);
  return eraseSubject(principal.projectId, subject, requesterOf(principal, subject));
}

/**
 * Erases a subject within one project, step by step (`privacyAreas`), on a durable record: the
 * record is written first, each finished step is written to it, and a call that finds it `running`
 * (a crash, a timeout, a failed step) runs the steps not yet finished; one that finds it `done`
 * answers it as it stands, changing nothing. Steps are idempotent, so a step interrupted halfway
 * runs again from its start. Another project's items are never addressed: every key begins with
 * `projectId`.
 */
export async function eraseSubject(
  projectId: string,
  userId: string,
  requestedBy: string,
  options: ErasureOptions = {},
): Promise<ErasureAnswer> {
  const now = new Date().toISOString();
  const fresh: erasures.ErasureItem = {
    ...erasures.erasureKey(projectId, userId),
    erasureId: newId('er'),
    subjectRef: erasures.subjectRef(projectId, userId),
    state: 'running',
    steps: {},
    requestedBy,
    startedAt: now,
    completedAt: null,
    attempts: 1,
  };
  let record = fresh;
  if (!(await erasures.startErasure(fresh))) {
    const found = await erasures.findErasure(projectId, userId);
    if (!found) throw new Error('The erasure record vanished between its conditional put and its read');
    if (found.state === 'done') return toAnswer(found);
    await erasures.countErasureAttempt(projectId, userId);
    record = { ...found, attempts: found.attempts + 1 };
  }
  const steps: Record<string, number> = { ...record.steps };
  for (const area of options.areas ?? privacyAreas) {
    if (area.id in steps) continue;
    const count = await area.erase({ projectId, userId, actor: requestedBy });
    await erasures.recordErasureStep(projectId, userId, area.id, count);
    steps[area.id] = count;
  }
  await erasures.finishErasure(projectId, userId, new Date().toISOString());
  const done = await erasures.findErasure(projectId, userId);
  logger.info('privacy.erased', { projectId, erasureId: record.erasureId, attempts: record.attempts });
  return toAnswer(done ?? { ...record, steps, state: 'done', completedAt: new Date().toISOString() });
}
