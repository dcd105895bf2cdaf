import { describePusherApp } from '#domain/pusher/apps';
import { httpHandler, ok } from '#edge/http';

export const handler = httpHandler('GetPusherApp', {}, async ({ caller }) => ok(await describePusherApp(caller.projectId)));
