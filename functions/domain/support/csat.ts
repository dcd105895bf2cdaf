import { createHash } from 'node:crypto';
import type { UserPrincipal } from '#shared/auth';
import {
  answerSurvey,
  type CsatSource,
  newSurveyPart,
  pendingSurveysInRoom,
  putSurveyIfAbsent,
  type SurveyItem,
  surveyItemFor,
} from '#shared/db/csat-survey';
import { membershipsPage } from '#shared/db/membership';
import type { TransactPart } from '#shared/db/transact';
import { ConflictError, NotFoundError } from '#shared/errors';
import type { DomainEvent } from '#shared/events';
import { AGENT_USER_PREFIX, ERASED_USER_PREFIX } from '#shared/ids';

/**
 * Satisfaction surveys (CSAT). A survey is created pending when a ticket is solved (for its
 * requester, in the ticket's transaction) or a handoff completes (for the room's customers, by the
 * `CsatSurveyor` subscriber of the `handoff` event); the user lists their pending ones in a room
 * and answers each once (score 1-5, optional comment).
 */
export const CSAT_RETENTION_DAYS = 90;
export const MAX_CSAT_COMMENT_LENGTH = 1000;
/** Members of a room a completed handoff asks: support rooms are a customer or a few and their helpers. */
const HANDOFF_SURVEY_MEMBERS = 50;

/** One survey per source and user, whatever delivers the source twice. */
const surveyIdFor = (source: CsatSource, sourceId: string, userId: string) =>
  `csat_${createHash('sha256').update(`${source}\u0000${sourceId}\u0000${userId}`).digest('hex').slice(0, 24)}`;

export function newSurvey(projectId: string, input: { userId: string; roomId: string; source: CsatSource; sourceId: string; now: Date }) {
  return surveyItemFor(projectId, {
    surveyId: surveyIdFor(input.source, input.sourceId, input.userId),
    userId: input.userId,
    roomId: input.roomId,
    source: input.source,
    sourceId: input.sourceId,
    createdAt: input.now.toISOString(),
    ttl: Math.floor(input.now.getTime() / 1000) + CSAT_RETENTION_DAYS * 86_400,
  });
}

/** The part that asks `survey`, for the transaction of the change that causes it. */
export const askSurveyPart = (survey: SurveyItem): TransactPart => newSurveyPart(survey);

export function toSurvey(item: SurveyItem) {
  const { pk: _pk, sk: _sk, ttl: _ttl, ...survey } = item;
  return survey;
}

/** `GET /support/csat/pending?roomId=`: the caller's own unanswered surveys about the room (none for a room they never had one in). */
export async function listPendingSurveys(user: UserPrincipal, roomId: string) {
  const surveys = await pendingSurveysInRoom(user.projectId, user.userId, roomId);
  return { surveys: surveys.map(toSurvey) };
}

/** `POST /support/csat/{surveyId}`: 404 `survey_not_found` (not the caller's), 409 `survey_answered` (once only). */
export async function answerPendingSurvey(user: UserPrincipal, surveyId: string, answer: { score: number; comment?: string }) {
  const result = await answerSurvey(user.projectId, user.userId, surveyId, {
    score: answer.score,
    comment: answer.comment ?? null,
    answeredAt: new Date().toISOString(),
  });
  if (result === 'missing') throw new NotFoundError('survey_not_found', 'No such satisfaction survey of yours');
  if (result === 'answered') throw new ConflictError('survey_answered', 'This survey was answered already');
  return toSurvey(result);
}

/**
 * The `CsatSurveyor` subscriber: a completed handoff asks each customer of the room, i.e. every
 * member but the humans who took it over or completed it, the agent its task went to, AI agents
 * and erased users. The survey id is derived from the handoff and the user, so a redelivered event
 * asks nobody twice. Answers how many surveys it created.
 */
export async function surveysForCompletedHandoff(event: DomainEvent<'handoff'>): Promise<number> {
  const { projectId, payload } = event;
  if (payload.state !== 'completed') return 0;
  const staff = new Set([payload.takenBy, payload.completedBy, payload.agentId].filter((id): id is string => typeof id === 'string'));
  const { memberships } = await membershipsPage(projectId, payload.roomId, { limit: HANDOFF_SURVEY_MEMBERS, consistent: true });
  const customers = memberships
    .map((membership) => membership.userId)
    .filter((userId) => !staff.has(userId) && !userId.startsWith(AGENT_USER_PREFIX) && !userId.startsWith(ERASED_USER_PREFIX));
  const now = new Date(event.createdAt);
  const created = await Promise.all(
    customers.map((userId) =>
      putSurveyIfAbsent(newSurvey(projectId, { userId, roomId: payload.roomId, source: 'handoff', sourceId: payload.handoffId, now })),
    ),
  );
  return created.filter(Boolean).length;
}
