import { gatewayAnswers, ROUTE_SELECTION_FIELD } from '#wiring';

const answersByType = new Map([...gatewayAnswers].map(([type, answer]) => [type, JSON.stringify(answer)]));

/**
 * API Gateway's route selection on the frame's `type`: the answer of the MOCK route the frame
 * selects, or `undefined` for a frame that goes to `$default` (any other type, or not JSON).
 */
export function mockRouteAnswer(text: string): string | undefined {
  let frame: unknown;
  try {
    frame = JSON.parse(text);
  } catch {
    return undefined;
  }
  const type = (frame as Record<string, unknown> | null)?.[ROUTE_SELECTION_FIELD];
  return typeof type === 'string' ? answersByType.get(type) : undefined;
}
