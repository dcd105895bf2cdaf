import { setWidgetSettings } from '#domain/widget/settings';
import { httpHandler, ok } from '#edge/http';
import { widgetSettingsBody } from './schemas';

/** 200 with the settings as `GET /admin/widget` answers them. */
export const handler = httpHandler('PutWidgetSettings', { body: widgetSettingsBody }, async ({ body, caller }) =>
  ok(await setWidgetSettings(caller, body)),
);
