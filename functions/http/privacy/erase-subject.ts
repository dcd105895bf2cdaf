import { eraseTokenSubject } from '#domain/privacy/erasure';
import { httpHandler, ok } from '#edge/http';

export const handler = httpHandler('EraseSubject', {}, async ({ user }) => ok(await eraseTokenSubject(user)));
