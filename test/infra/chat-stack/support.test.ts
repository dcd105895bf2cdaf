import { describeAreaStack } from '../../support/chat-stack/area-suite.ts';

/** The Support area's nested stack against its entries in the wiring table (checks: `area-suite.ts`). */
describeAreaStack('Support');
