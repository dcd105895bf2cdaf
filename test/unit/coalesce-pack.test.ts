import { describe, expect, it } from 'vitest';
import { BATCH_FRAME_MAX_BYTES, packFrames } from '#domain/realtime/coalesce';

/** The batch frame of coalesced delivery (docs/architecture.md, "Hot rooms: coalesced delivery"). */

const frame = (id: number, bytes: number) => {
  const bare = JSON.stringify({ type: 'message', message: { id, content: '' } });
  return JSON.stringify({ type: 'message', message: { id, content: 'é'.repeat(Math.max(0, (bytes - Buffer.byteLength(bare)) / 2)) } });
};
const unpack = (packed: readonly string[]) =>
  packed.flatMap((text) => {
    const parsed = JSON.parse(text);
    return parsed.type === 'batch' ? parsed.frames : [parsed];
  });

describe('packFrames', () => {
  it('sends a lone frame plain and several in one batch frame, in order', () => {
    // Prepare
    const frames = [frame(1, 300), frame(2, 300), frame(3, 300)];

    // Act
    const lone = packFrames([frames[0] as string]);
    const together = packFrames(frames);

    // Assess
    expect(lone).toEqual([frames[0]]);
    expect(together).toHaveLength(1);
    expect(JSON.parse(together[0] as string)).toEqual({ type: 'batch', frames: frames.map((text) => JSON.parse(text)) });
  });

  it.each([10_000, 16_000, 32_000])('splits frames of %i bytes (UTF-8) so that no frame passes 32,768 bytes, keeping order', (bytes) => {
    // Prepare
    const frames = Array.from({ length: 9 }, (_, i) => frame(i, bytes));

    // Act
    const packed = packFrames(frames);

    // Assess
    for (const text of packed) expect(Buffer.byteLength(text)).toBeLessThanOrEqual(BATCH_FRAME_MAX_BYTES);
    expect(unpack(packed)).toEqual(frames.map((text) => JSON.parse(text)));
    expect(packed.length).toBeGreaterThan(1);
  });

  it('fills a batch frame up to exactly the limit', () => {
    // Prepare: a batch of two is the frames, the opening and closing, and one comma.
    const overhead = Buffer.byteLength('{"type":"batch","frames":[]}');
    const frames = [frame(1, 5000), frame(2, 7000)];

    // Act
    const packed = packFrames(frames, overhead + 1 + frames.reduce((sum, text) => sum + Buffer.byteLength(text), 0));

    // Assess
    expect(packed).toHaveLength(1);
    expect(packFrames(frames, overhead + frames.reduce((sum, text) => sum + Buffer.byteLength(text), 0))).toEqual(frames);
  });
});
