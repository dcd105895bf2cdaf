import { accessRoom } from '#domain/rooms/rooms';
import type { Principal } from '#shared/auth';
import { refuseReservedId } from '#shared/ids';
import type { MessageInput } from './message-input';
import { sendMessage } from './pipeline';

export const MAX_IMPORT_ROWS = 100;
const IMPORT_CONCURRENCY = 8;

/**
 * Imports rows through the message pipeline. Every room and client id is checked before the first
 * write, so a batch naming an unknown room or a reserved id writes nothing; rows of one room keep
 * their order.
 */
export async function importMessages(principal: Principal, rows: readonly MessageInput[]) {
  for (const [index, row] of rows.entries()) {
    if (row.clientMessageId !== undefined) refuseReservedId('clientMessage', row.clientMessageId, `body.messages.${index}.clientMessageId`);
  }
  for (const roomId of new Set(rows.map((row) => row.roomId))) await accessRoom(principal, roomId, { join: false });
  const byRoom = new Map<string, { row: MessageInput; index: number }[]>();
  for (const [index, row] of rows.entries()) byRoom.set(row.roomId, [...(byRoom.get(row.roomId) ?? []), { row, index }]);
  const results: { index: number; created: boolean; message: Awaited<ReturnType<typeof sendMessage>>['message'] }[] = [];
  const queues = [...byRoom.values()];
  const worker = async () => {
    for (let queue = queues.shift(); queue; queue = queues.shift()) {
      for (const { row, index } of queue) {
        const { message, created } = await sendMessage(principal, row, { source: 'import' });
        results.push({ index, created, message });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(IMPORT_CONCURRENCY, queues.length) }, worker));
  results.sort((a, b) => a.index - b.index);
  return { imported: results.filter((r) => r.created).length, duplicates: results.filter((r) => !r.created).length, results };
}
