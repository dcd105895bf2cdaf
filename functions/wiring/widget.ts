import type { Area } from './types.ts';

/** The embeddable chat widget: its script, the guest sessions it opens and the project's widget settings. */
export const widget: Area = {
  id: 'Widget',
  summary: 'The embeddable chat widget: its script, guest sessions and the allowed site origins',
  httpRoutes: [
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
