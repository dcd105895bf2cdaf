import { getWidgetSettings } from '#domain/widget/settings';
import { httpHandler, ok } from '#edge/http';

export const handler = httpHandler('GetWidgetSettings', {}, async ({ caller }) => ok(await getWidgetSettings(caller.projectId)));
