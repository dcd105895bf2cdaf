import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleAllFunctions, bundledFunctions } from '../../bench/bundles.ts';
import { BUNDLE_ALLOWANCES, GOALS } from '../../bench/harness.ts';

/**
 * Every function of the wiring table, bundled with esbuild from the settings `ChatFunction` exports
 * (the build `cdk deploy` ships, as `npm run bench` measures it), stays under the bundle size goal:
 * bundles drive Lambda cold starts. The bench reports sizes and init times; this test keeps the
 * size from creeping past the goal between bench runs.
 */
describe(`function bundles (≤ ${GOALS.bundleKiB} KB each)`, () => {
  const outDir = mkdtempSync(join(tmpdir(), 'chat-bundle-size-'));
  let built: Awaited<ReturnType<typeof bundleAllFunctions>>;

  beforeAll(async () => {
    built = await bundleAllFunctions(outDir);
  }, 120_000);

  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it.each(bundledFunctions.map((fn) => [fn.id, fn.route] as const))('%s (%s)', (id) => {
    const bundle = built.find((candidate) => candidate.id === id);

    expect(bundle?.bytes).toBeGreaterThan(0);
    const allowed = BUNDLE_ALLOWANCES[id]?.kib ?? GOALS.bundleKiB;
    expect((bundle?.bytes ?? Number.POSITIVE_INFINITY) / 1024, `${id}: KB of index.mjs`).toBeLessThanOrEqual(allowed);
  });

  it('allow a larger bundle only to a function that exists and needs it', () => {
    for (const [id, allowance] of Object.entries(BUNDLE_ALLOWANCES)) {
      const bundle = built.find((candidate) => candidate.id === id);
      expect(bundle, `${id} is no function of the wiring table`).toBeDefined();
      expect((bundle?.bytes ?? 0) / 1024, `${id} fits the goal again: drop its allowance`).toBeGreaterThan(GOALS.bundleKiB);
      expect(allowance.reason.length).toBeGreaterThan(20);
    }
  });

  it("carry the environment's credentials alone, never the SDK's default chain", () => {
    const chainModules = built.flatMap((bundle) =>
      bundle.inputs
        .filter((input) => /credential-provider-(node|ini|sso|process|web-identity|login)|nested-clients/.test(input))
        .map((input) => `${bundle.id}: ${input}`),
    );
    const withSdk = built.filter((bundle) => bundle.inputs.some((input) => input.includes('@aws-sdk/client-')));

    expect(chainModules).toEqual([]);
    for (const bundle of withSdk) expect(bundle.inputs).toContain('functions/shared/lambda-credentials.ts');
  });
});
