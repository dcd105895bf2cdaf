import type { Area } from './types.ts';

/** The embeddable chat widget: its script, its guest sessions and the settings a project embeds it with. */
export const widget: Area = {
  id: 'Widget',
  summary: 'The embed widget: its script, guest sessions and the sites a project embeds it on',
  httpRoutes: [
    {
      id: 'CreateGuestSession',
      method: 'POST',
      path: '/auth/guest',
      handler: 'http/widget/create-guest-session.ts',
      // The widget's visitors have no credentials: the project's allowed origins and embed_widget
      // flag are checked in the handler, since the project comes from the body.
      auth: 'none',
      rateLimit: { bucket: 'guest-sessions', per: 'ip', setting: 'RATE_LIMIT_GUEST_SESSIONS_PER_IP_PER_MINUTE' },
      bindings: ['table:read', 'table:write', 'secret:signing-key'],
      summary: "Start a guest session for the embed widget (a short-lived guest token bound to the page's origin)",
    },
    {
      id: 'GetWidgetSettings',
      method: 'GET',
      path: '/admin/widget',
      handler: 'http/widget/get-widget-settings.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read'],
      summary: "The project's widget settings: allowed site origins and the support room",
    },
    {
      id: 'PutWidgetSettings',
      method: 'PUT',
      path: '/admin/widget',
      handler: 'http/widget/put-widget-settings.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read', 'table:write'],
      audit: { action: 'widget.settings_set' },
      summary: "Replace the project's widget settings",
    },
    {
      id: 'GetEmbedScript',
      method: 'GET',
      path: '/embed.js',
      handler: 'http/widget/get-embed-script.ts',
      auth: 'none',
      // The deployment's default here; `?projectId=` names a project whose override the handler reads.
      flag: 'embed_widget',
      bindings: ['table:read'],
      browserBundle: { entry: 'web/widget/embed.ts', file: 'embed.js' },
      summary: 'The embed widget script (one <script> tag on a site); 403 while embed_widget is off',
    },
  ],
};
