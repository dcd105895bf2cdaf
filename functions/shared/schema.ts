import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

/**
 * The project's zod: the tree-shakable `zod/mini` API with English messages; import it as
 * `import * as z from '#shared/schema'`. The classic API bundles every locale and the JSON-schema
 * tooling (~440 KB per function); mini keeps zod's share of a bundle near 20 KB. Member access on
 * the namespace is what lets esbuild drop the rest, so never pass `z` around as a value.
 */
config(en());

export * from 'zod/mini';
