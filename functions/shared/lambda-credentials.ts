import { fromEnv } from '@aws-sdk/credential-provider-env';

/**
 * Stands in for `@aws-sdk/credential-provider-node` in the Lambda bundles (an esbuild alias of
 * `ChatFunction`). Lambda hands a function its role's credentials in environment variables, the
 * first link of the SDK's default chain, so the rest of that chain (profiles, SSO, web identity,
 * IMDS, and the STS/SSO clients they carry: about 90 KB of every bundle) is never reached there
 * and only slows cold starts. Locally the handlers run unbundled, on the full chain.
 */
export const defaultProvider: typeof fromEnv = (init) => fromEnv(init);
