import { describeAreaStack } from '../../support/chat-stack/area-suite.ts';

/** The Calls area's nested stack against its entries in the wiring table (checks: `area-suite.ts`). */
describeAreaStack('Calls');
