import type { FiguresFeed } from '../figures-feed';
import type { Gateway } from '../gateway';
import type { LocalScheduler } from '../scheduler';
import type { SwitchableProxy } from '../switchable-proxy';
import type { RunningConsumers } from './consumers';
import type { StandIns } from './stand-ins';
import { removeWebBundles } from './web-bundles';

/** What a runtime has started so far: a start that fails half way stops just these. */
export interface RunningParts {
  readonly standIns: StandIns;
  readonly consumers: RunningConsumers;
  fanOut?: SwitchableProxy;
  gateway?: Gateway;
  scheduler?: LocalScheduler;
  /** The log subscriptions' stand-in: its last figures are handed over before the table goes. */
  figures?: FiguresFeed;
  /** The browser bundles written at start (`WEB_BUNDLES_DIR`). */
  webBundlesDir?: string;
}

/**
 * Stops the runtime the other way round from its start: the consumers and the gateway first, so
 * no new work reaches a handler (the scheduler's timers too), then the Step Functions interpreter, the fan-out switch, and last
 * the stand-ins every handler calls.
 */
export async function stopRunningParts(running: RunningParts): Promise<void> {
  running.scheduler?.stop();
  const { queues, streams } = running.consumers;
  await Promise.all([...queues, ...streams].map((part) => part.stop()));
  await running.gateway?.stop();
  await running.figures?.stop();
  await running.standIns.stepFunctions.stop();
  await running.fanOut?.close();
  const { dynamo, sqs, secrets, ses, s3 } = running.standIns;
  await Promise.all([dynamo.stop(), sqs.stop(), secrets.stop(), ses.stop(), s3?.stop()]);
  if (running.webBundlesDir) await removeWebBundles(running.webBundlesDir);
}
