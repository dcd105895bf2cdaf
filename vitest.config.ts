import { defineConfig } from 'vitest/config';

/**
 * Four projects: `unit` (pure), `integration` and `e2e` (one local runtime for both, started by the
 * global setup: DynamoDB Local, the SQS stand-in and the gateway on free loopback ports) and
 * `infra` (CDK synth, template assertions, cdk-nag).
 */
export default defineConfig({
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          // Config is parsed at import; unit tests never reach these resources.
          env: {
            TABLE_NAME: 'unit',
            AWS_REGION: 'us-east-1',
            AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
            // Error paths are tested on purpose; their log lines are noise here.
            POWERTOOLS_LOG_LEVEL: 'SILENT',
          },
        },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', 'test/e2e/**/*.test.ts', 'test/browser/**/*.test.ts'],
          globalSetup: ['test/support/global-setup.ts'],
          setupFiles: ['test/support/runtime-env.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'infra',
          include: ['test/infra/**/*.test.ts'],
          testTimeout: 240_000,
          hookTimeout: 240_000,
          // Files of a worker share their modules, so the chat-stack suite (a file per area) synthesizes
          // the app once per worker (test/support/chat-stack/synthesized.ts) and aws-cdk-lib loads once.
          isolate: false,
        },
      },
    ],
  },
});
