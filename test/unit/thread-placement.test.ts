import { describe, expect, it } from 'vitest';
import { MAX_INDEXED_DEPTH, type MessageItem, threadIndexSk, threadPlacement } from '#shared/db/message';

/** The thread index's sort keys: breadth-first order, and items that stay small however deep a chain of replies goes. */

const message = (id: number, parent?: MessageItem): MessageItem => {
  const placement = parent && threadPlacement(parent);
  return {
    pk: 'P#p#R#r#MSGS',
    sk: `MSG#${id}`,
    projectId: 'p',
    roomId: 'r',
    id,
    userId: 'u',
    content: 'c',
    parent_id: parent?.id ?? null,
    attachments: [],
    clientMessageId: null,
    createdAt: new Date(0).toISOString(),
    moderation: null,
    ...(placement ? { thread_root: placement.root, thread_depth: placement.depth, thread_path: placement.path } : {}),
  };
};
const keyOf = (item: MessageItem) =>
  threadIndexSk({ root: item.thread_root as number, depth: item.thread_depth as number, path: item.thread_path as string }, item.id);

describe('thread index sort keys', () => {
  it('sort breadth-first: a level after the one above it, children in their parents’ order, siblings by id', () => {
    // Arrange: R ← A(1), B(2); A ← C(5), E(6); B ← D(3); C ← F(9); D ← G(7)
    const r = message(100);
    const a = message(101, r);
    const b = message(102, r);
    const c = message(105, a);
    const d = message(103, b);
    const e = message(106, a);
    const f = message(109, c);
    const g = message(107, d);

    // Act
    const sorted = [g, f, e, d, c, b, a].sort((x, y) => keyOf(x).localeCompare(keyOf(y))).map((item) => item.id);

    // Assess
    expect(sorted).toEqual([101, 102, 105, 106, 103, 109, 107]);
  });

  it(`stop the path growing past depth ${MAX_INDEXED_DEPTH}, so a long chain of replies keeps its items small`, () => {
    // Arrange: a chain of 200 replies
    let current = message(1);
    const chain: MessageItem[] = [];
    for (let id = 2; id <= 201; id++) {
      current = message(id, current);
      chain.push(current);
    }

    // Assess
    const deepest = chain.at(-1) as MessageItem;
    expect(deepest.thread_depth).toBe(200);
    expect(deepest.thread_path).toBe('');
    expect(keyOf(deepest)).toMatch(/^~#/);
    expect(Math.max(...chain.map((item) => keyOf(item).length))).toBeLessThan(1024);
  });
});
