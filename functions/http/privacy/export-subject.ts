import { exportTokenSubject } from '#domain/privacy/export';
import { httpHandler, jsonAttachment, ok } from '#edge/http';

export const handler = httpHandler('ExportSubjectData', {}, async ({ user }) => {
  const answer = await exportTokenSubject(user);
  return answer.kind === 'inline' ? jsonAttachment(answer.json, answer.filename) : ok(answer.body, { 'cache-control': 'no-store' });
});
