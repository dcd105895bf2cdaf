import { inject } from 'vitest';
import { standInClient } from './client';

/** The shared runtime's platform stand-ins (started by `test/support/global-setup.ts`), steered over HTTP. */
export function sharedBridgePlatforms() {
  const info = inject('bridgePlatforms');
  return { slack: standInClient(info.slack), discord: standInClient(info.discord), matrix: standInClient(info.matrix) };
}
