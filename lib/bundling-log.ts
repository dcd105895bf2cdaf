/**
 * How much a synth says while it bundles the functions. By default nothing per function: esbuild
 * reports warnings and errors only, and CDK's "Bundling asset <path>..." line, which it writes to
 * stderr for every asset whatever the CLI's `--quiet`, is dropped; so `cdk synth --quiet` prints nothing
 * instead of 486 lines (six per bundle, 81 bundles). `CHAT_BUNDLING_LOG=1` brings both back (esbuild's size
 * summary per bundle included).
 */
export const bundlingLogRequested = (): boolean => ['1', 'true'].includes(process.env.CHAT_BUNDLING_LOG ?? '');

/** CDK's progress line for one asset (`core/lib/asset-staging.ts`); nothing else matches it. */
const bundlingProgressLine = /^Bundling asset \S+\.\.\.\r?\n$/;

/** Drops CDK's per-asset progress lines from `stream` unless `CHAT_BUNDLING_LOG` asks for them; every other write passes. */
export function quietBundlingProgress(stream: NodeJS.WriteStream = process.stderr): void {
  if (bundlingLogRequested()) return;
  const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (typeof chunk === 'string' && bundlingProgressLine.test(chunk)) {
      // A caller waiting for the write still hears that it is done.
      const callback = rest.find((argument) => typeof argument === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    }
    return write(chunk, ...rest);
  }) as typeof stream.write;
}
