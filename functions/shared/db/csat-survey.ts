import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { deletePartition } from './batch';
import { db, tableName } from './client';
import { userPk } from './keys';
import { putIfAbsent } from './put-if-absent';
import { queryAll } from './query';
import { isConditionFailure, type TransactPart } from './transact';

/**
 * Satisfaction surveys (CSAT), in a partition per user: a survey asks one user about one solved
 * ticket or completed handoff in one room. Its id is derived from that source and the user, so a
 * repeated event or a ticket solved again asks nothing twice. Answered once; kept with the answer
 * until its TTL.
 */
export const CSAT_SOURCES = ['ticket', 'handoff'] as const;
export type CsatSource = (typeof CSAT_SOURCES)[number];

export const surveysPk = (projectId: string, userId: string) => `${userPk(projectId, userId)}#CSAT`;
export const surveyKey = (projectId: string, userId: string, surveyId: string) => ({
  pk: surveysPk(projectId, userId),
  sk: `S#${surveyId}`,
});

export const surveyItem = z.object({
  pk: z.string(),
  sk: z.string(),
  surveyId: z.string(),
  userId: z.string(),
  roomId: z.string(),
  source: z.enum(CSAT_SOURCES),
  sourceId: z.string(),
  status: z.enum(['pending', 'answered']),
  score: z.nullable(z.number().check(z.int())),
  comment: z.nullable(z.string()),
  createdAt: z.string(),
  answeredAt: z.nullable(z.string()),
  ttl: z.number().check(z.int()),
});
export type SurveyItem = z.infer<typeof surveyItem>;

export type NewSurvey = Pick<SurveyItem, 'surveyId' | 'userId' | 'roomId' | 'source' | 'sourceId' | 'createdAt' | 'ttl'>;

export const surveyItemFor = (projectId: string, survey: NewSurvey): SurveyItem => ({
  ...surveyKey(projectId, survey.userId, survey.surveyId),
  ...survey,
  status: 'pending',
  score: null,
  comment: null,
  answeredAt: null,
});

/** The survey, unless it exists already (for a transaction that must not ask twice). */
export const newSurveyPart = (item: SurveyItem): TransactPart => ({
  Put: { TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' },
});

/** Stores the survey unless it exists already: `false` when it did. */
export const putSurveyIfAbsent = (item: SurveyItem) => putIfAbsent(item);

export async function findSurvey(projectId: string, userId: string, surveyId: string): Promise<SurveyItem | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: surveyKey(projectId, userId, surveyId), ConsistentRead: true }),
  );
  return Item ? surveyItem.parse(Item) : undefined;
}

/** The user's unanswered surveys about one room, oldest first. */
export async function pendingSurveysInRoom(projectId: string, userId: string, roomId: string): Promise<SurveyItem[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk',
      FilterExpression: 'roomId = :room AND #status = :pending',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: { ':pk': surveysPk(projectId, userId), ':room': roomId, ':pending': 'pending' },
    }),
  );
  return Items.map((raw) => surveyItem.parse(raw)).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/** Records the answer if the survey is the user's and still pending: `missing` or `answered` otherwise. */
export async function answerSurvey(
  projectId: string,
  userId: string,
  surveyId: string,
  answer: { score: number; comment: string | null; answeredAt: string },
): Promise<SurveyItem | 'missing' | 'answered'> {
  try {
    const { Attributes } = await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: surveyKey(projectId, userId, surveyId),
        UpdateExpression: 'SET #status = :answered, score = :score, #comment = :comment, answeredAt = :at',
        ConditionExpression: '#status = :pending',
        ExpressionAttributeNames: { '#status': 'status', '#comment': 'comment' },
        ExpressionAttributeValues: {
          ':answered': 'answered',
          ':pending': 'pending',
          ':score': answer.score,
          ':comment': answer.comment,
          ':at': answer.answeredAt,
        },
        ReturnValues: 'ALL_NEW',
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return surveyItem.parse(Attributes);
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
    // The condition also fails on no item at all (no status): which it was decides 404 or 409.
    return (error as { Item?: unknown }).Item ? 'answered' : 'missing';
  }
}

/** Every survey of the user (GDPR export). */
export async function surveysOfUser(projectId: string, userId: string): Promise<SurveyItem[]> {
  return (await queryAll({ KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': surveysPk(projectId, userId) } })).map(
    (raw) => surveyItem.parse(raw),
  );
}

/** Erases the user's surveys, answers included: how many there were. */
export const deleteSurveysOfUser = (projectId: string, userId: string) => deletePartition(surveysPk(projectId, userId));
