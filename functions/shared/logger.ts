import { Logger } from '@aws-lambda-powertools/logger';

/** One structured JSON logger per function instance; handlers append the request's trace id. */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'chat' });
