/**
 * "Did you mean …?" for a name the service does not know: a body key (`parentId` for `parent_id`),
 * an event type (`message.create` for `message.created`), an enum value. Only a clear near miss is
 * suggested, so a suggestion is a hint worth following rather than a guess.
 */

/** Case, `_`, `-`, `.` and spaces are how names of the same thing differ most (`parentId`, `parent_id`). */
const comparable = (name: string) => name.toLowerCase().replace(/[\s_.-]/g, '');

/** Levenshtein distance, or `limit + 1` as soon as it is known to exceed `limit` (long inputs cost little). */
export function editDistance(a: string, b: string, limit = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j += 1) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      const value = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution);
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length] as number;
}

/**
 * The one candidate `input` most likely misspells: within a distance that grows with the name
 * (1 for up to 3 characters, at most 3), compared without case and separators. `undefined` when
 * none is that close, when two are equally close, or when `input` is itself a candidate.
 */
export function closestMatch(input: string, candidates: Iterable<string>): string | undefined {
  const wanted = comparable(input);
  const limit = Math.min(3, 1 + Math.floor(wanted.length / 4));
  let best: string | undefined;
  let bestDistance = limit + 1;
  let tied = false;
  for (const candidate of candidates) {
    if (candidate === input) return undefined;
    const distance = editDistance(wanted, comparable(candidate), limit);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
      tied = false;
    } else if (distance === bestDistance && candidate !== best) {
      tied = true;
    }
  }
  return bestDistance <= limit && !tied ? best : undefined;
}
