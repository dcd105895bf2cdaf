import { answerPendingSurvey } from '#domain/support/csat';
import { httpHandler, ok } from '#edge/http';
import { answerCsatBody, surveyParams } from './schemas';

/** 200 with the answered survey; 404 survey_not_found, 409 survey_answered. */
export const handler = httpHandler('AnswerCsat', { params: surveyParams, body: answerCsatBody }, async ({ params, body, user }) =>
  ok({ survey: await answerPendingSurvey(user, params.surveyId, body) }),
);
