import type { Binding } from './bindings.ts';
import type { Area } from './types.ts';

/**
 * Stores a message and broadcasts it: the table (the message item carries its domain events to the
 * stream), large rooms through the realtime queue, and posts to the room's connections.
 */
export const messageWriter: readonly Binding[] = ['table:read', 'table:write', 'queue:Realtime', 'connections:manage'];

/** Messages, history, imports and moderation of their content. */
export const messages: Area = {
  id: 'Messages',
  summary: 'Sending and reading messages, imports and the moderation block list',
  httpRoutes: [
    {
      id: 'CreateMessage',
      method: 'POST',
      path: '/messages',
      handler: 'http/messages/create-message.ts',
      auth: 'user',
      bindings: messageWriter,
      summary: 'Send a message to a room',
    },
    {
      id: 'ListRoomMessages',
      method: 'GET',
      path: '/rooms/{roomId}/messages',
      handler: 'http/messages/list-messages.ts',
      auth: 'userOrService',
      bindings: ['table:read', 'table:write'],
      summary: 'Message history with before/after cursors',
    },
    {
      id: 'PostRoomMessage',
      method: 'POST',
      path: '/rooms/{roomId}/messages',
      handler: 'http/messages/post-room-message.ts',
      auth: 'userOrService',
      bindings: messageWriter,
      summary: 'Send a message; admins may set userId and createdAt',
    },
    {
      id: 'ImportMessage',
      method: 'POST',
      path: '/admin/messages/import',
      handler: 'http/messages/import-message.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: messageWriter,
      summary: 'Import one message, idempotent on clientMessageId',
    },
    {
      id: 'ImportMessageBatch',
      method: 'POST',
      path: '/admin/messages/import/batch',
      handler: 'http/messages/import-message-batch.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: messageWriter,
      summary: 'Import up to 100 messages',
    },
    {
      id: 'GetBlockList',
      method: 'GET',
      path: '/admin/moderation/blocklist',
      handler: 'http/moderation/get-block-list.ts',
      auth: 'userOrService',
      minRole: 'moderator',
      bindings: ['table:read'],
      summary: "The project's moderation block list",
    },
    {
      id: 'ReplaceBlockList',
      method: 'PUT',
      path: '/admin/moderation/blocklist',
      handler: 'http/moderation/replace-block-list.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read', 'table:write'],
      summary: 'Replace the block list',
    },
    {
      id: 'ListModerationFlags',
      method: 'GET',
      path: '/admin/moderation/flags',
      handler: 'http/moderation/list-flags.ts',
      auth: 'userOrService',
      minRole: 'moderator',
      bindings: ['table:read'],
      summary: 'Moderation records written by automatic flags, newest first',
    },
  ],
};
