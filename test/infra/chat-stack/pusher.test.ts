import { describeAreaStack } from '../../support/chat-stack/area-suite.ts';

/**
 * The Pusher area's nested stack against its entries in the wiring table (checks: `area-suite.ts`);
 * the `/app/*` socket path is the edge's (`edge.test.ts`).
 */
describeAreaStack('Pusher');
