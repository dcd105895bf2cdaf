/**
 * The floors of the codebase (docs/architecture.md, "Floors"), enforced by `npm test`
 * (`npm run lint:deps`). Top to bottom:
 *
 *   bin → lib (CDK, local runtime) → handlers (functions/http, ws, workers) → edge → domain
 *       → shared (entities, events, outbound, providers) → wiring
 *
 * A module may import from its own floor or any floor below it. An arrow that runs back up is a
 * design bug: it is how a Lambda bundle grows CDK code, how a change to a handler breaks an entity,
 * and how two areas end up unable to change apart.
 */
const handlers = '^functions/(http|ws|workers)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment:
        'A cycle makes two modules one unit that neither can be read, tested nor changed alone, and makes import order matter at cold start.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'wiring-is-the-floor',
      severity: 'error',
      comment:
        'The wiring table is read by CDK, the local runtime and every handler bundle: it must stay plain data, so it imports nothing of ours outside its folder (CDK types only, which erase at build).',
      from: { path: '^functions/wiring/' },
      to: { path: '^(functions/(?!wiring/)|lib/|bin/|sdk/|web/|test/|bench/)' },
    },
    {
      name: 'shared-below-domain',
      severity: 'error',
      comment:
        'Entities, events, outbound and providers serve every area; importing an area (or the edge above it) would tie them to that area and form cycles through it.',
      from: { path: '^functions/shared/' },
      to: { path: `^functions/(domain|edge)/|${handlers}` },
    },
    {
      name: 'rooms-never-call-realtime-or-push',
      severity: 'error',
      comment:
        'Realtime and push call the rooms area (access checks); rooms calling back would tie the three into one unit. A membership change announces itself instead (room.member_joined, room.member_left in the outbox) and realtime and push consume the events (docs/architecture.md, "Events between areas").',
      from: { path: '^functions/domain/rooms/' },
      to: { path: '^functions/domain/(realtime|push)/' },
    },
    {
      name: 'domain-below-edge',
      severity: 'error',
      comment:
        'Domain functions take plain inputs and know nothing of Lambda events, middy or API Gateway, so they run the same from a handler, a worker, a test or a script.',
      from: { path: '^functions/domain/' },
      to: { path: `^functions/edge/|${handlers}` },
    },
    {
      name: 'domain-calls-entities',
      severity: 'error',
      comment:
        "Entities own their queries (docs/architecture.md): a query written in the domain is written again by the next area that needs it, and the table's access patterns stop being listable in one place. The domain calls the operations of functions/shared/db/ and never reaches the DynamoDB client (test/unit/domain-storage.test.ts reads the sources for commands and expressions built in place).",
      from: { path: '^functions/domain/' },
      to: {
        path: '(^|/)node_modules/@aws-sdk/(client-dynamodb|lib-dynamodb|util-dynamodb)/|^functions/shared/db/(client|query|batch)\\.ts$',
      },
    },
    {
      name: 'edge-below-handlers',
      severity: 'error',
      comment: 'The adapters are shared by every handler; a handler is a leaf that nothing in functions/ imports.',
      from: { path: '^functions/edge/' },
      to: { path: handlers },
    },
    {
      name: 'handlers-are-leaves',
      severity: 'error',
      comment:
        "A handler is the entry of its own Lambda bundle; importing another handler drags that route's code into this bundle. Shared handler schemas live beside them in a schemas.ts of the area.",
      from: { path: handlers },
      to: { path: handlers, pathNot: `${handlers}.*schemas\\.ts$|^functions/http/params\\.ts$|^functions/http/webhooks/signature\\.ts$` },
    },
    {
      name: 'functions-never-import-lib',
      severity: 'error',
      comment:
        'lib/ is CDK and the local runtime: the floor above the handlers. A function importing it would bundle CDK or local stand-ins into Lambda.',
      from: { path: '^functions/' },
      to: { path: '^(lib|bin|test|bench)/' },
    },
    {
      name: 'lib-never-imports-bin',
      severity: 'error',
      comment: 'bin/ holds the entry points; lib/ is what they put together.',
      from: { path: '^lib/' },
      to: { path: '^bin/' },
    },
    {
      name: 'sdk-stands-alone',
      severity: 'error',
      comment: 'The client SDK ships to browsers and apps on its own: it may not reach into the service or its tooling.',
      from: { path: '^sdk/' },
      to: { path: '^(functions|lib|bin|test|bench)/' },
    },
    {
      name: 'web-talks-to-the-public-api-only',
      severity: 'error',
      comment:
        'The widget, the demo page and the console run in browsers on other sites and reach the service through its public API (by the SDK) like any client app; importing the service would ship its code and secrets to them.',
      from: { path: '^web/' },
      to: { path: '^(functions|lib|bin|test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // sdk/dist is the SDK's build output (npm run build:sdk), not source.
    exclude: { path: '(^|/)(cdk\\.out|\\.data)/|^sdk/dist/' },
    tsPreCompilationDeps: true,
    combinedDependencies: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.mjs', '.cjs', '.json'],
    },
    tsConfig: { fileName: 'tsconfig.json' },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
