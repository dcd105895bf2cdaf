import { describeAreaStack } from '../../support/chat-stack/area-suite.ts';

/** The Bridges area's nested stack against its entries in the wiring table (checks: `area-suite.ts`). */
describeAreaStack('Bridges');
