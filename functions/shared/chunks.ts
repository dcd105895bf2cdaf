/**
 * Cuts `items`, in order, into runs of at most `maxEntries` items whose `bytesOf` add up to at most
 * `maxBytes`, as request and message limits want them (an SQS or SNS batch, a fan-out job). An item
 * larger than `maxBytes` alone makes a run of its own: the receiving end refuses it, not this.
 */
export function chunksWithin<T>(
  items: readonly T[],
  limits: { readonly maxBytes: number; readonly maxEntries?: number; readonly bytesOf: (item: T) => number },
): T[][] {
  const chunks: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const size = limits.bytesOf(item);
    const full = current.length >= (limits.maxEntries ?? Number.POSITIVE_INFINITY) || bytes + size > limits.maxBytes;
    if (current.length > 0 && full) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
