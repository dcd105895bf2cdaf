import type { HttpHandlerOptions } from '#edge/http';
import { secretValue } from '#shared/secrets';

/**
 * What the `/platform` routes (`auth: 'operator'`) hand to `httpHandler`: the operator key, read
 * from the `operator-key` secret at run time. Kept out of `#shared/http` so that only these
 * handlers bundle the Secrets Manager client.
 */
export const operatorAuth: HttpHandlerOptions = { operatorKey: () => secretValue('operator-key') };
