import { describe, expect, it } from 'vitest';
import { chunksWithin } from '../../functions/shared/chunks';

const bytesOf = (item: string) => item.length;

describe('chunksWithin', () => {
  it('keeps the order and cuts before the item that would pass the byte limit', () => {
    expect(chunksWithin(['aaa', 'bb', 'cccc', 'd'], { maxBytes: 5, bytesOf })).toEqual([
      ['aaa', 'bb'],
      ['cccc', 'd'],
    ]);
  });

  it('cuts at the entry limit too', () => {
    expect(chunksWithin(['a', 'b', 'c', 'd', 'e'], { maxBytes: 100, maxEntries: 2, bytesOf })).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
  });

  it('gives an item past the byte limit a chunk of its own, and nothing for nothing', () => {
    expect(chunksWithin(['a', 'toolong', 'b'], { maxBytes: 3, bytesOf })).toEqual([['a'], ['toolong'], ['b']]);
    expect(chunksWithin([], { maxBytes: 3, bytesOf })).toEqual([]);
  });
});
