import { Logger } from '@aws-lambda-powertools/logger';
import { currentTraceId } from '#shared/request-context';

/**
 * Powertools' Logger, whose lines carry the trace id current where they are written
 * (`#shared/request-context`). Its appended keys are one set per process, so records of one batch
 * handled side by side, or requests the local runtime serves at once, would otherwise stamp each
 * other's id.
 */
class TracedLogger extends Logger {
  protected override createAndPopulateLogItem(...args: Parameters<Logger['createAndPopulateLogItem']>) {
    const item = super.createAndPopulateLogItem(...args);
    const traceId = currentTraceId();
    return traceId === undefined ? item : item.addAttributes({ traceId });
  }
}

/** One structured JSON logger per function instance; every line carries the current trace id. */
export const logger: Logger = new TracedLogger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'chat' });
