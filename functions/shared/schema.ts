import { config } from 'zod/mini';
import { plainIssueMessage } from '#shared/schema-messages';

/**
 * The project's zod: the tree-shakable `zod/mini` API with the service's plain English messages
 * (`#shared/schema-messages`: "is required (a string)", "must be an integer"); import it as
 * `import * as z from '#shared/schema'`. The classic API bundles every locale and the JSON-schema
 * tooling (~440 KB per function); mini keeps zod's share of a bundle near 20 KB. Member access on
 * the namespace is what lets esbuild drop the rest, so never pass `z` around as a value.
 */
config({ localeError: plainIssueMessage });

export * from 'zod/mini';
