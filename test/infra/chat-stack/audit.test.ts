import { describeAreaStack } from '../../support/chat-stack/area-suite.ts';

/** The Audit area's nested stack against its entries in the wiring table (checks: `area-suite.ts`). */
describeAreaStack('Audit');
