// Joins one room as a user, prints every message that arrives, sends one message and waits for its
// acknowledgement, then listens until Ctrl-C (SIGINT) or SIGTERM, and disconnects.
//
//   node node.mjs <baseUrl> <userToken> <roomId> [message]
//   CHAT_URL=… CHAT_TOKEN=… CHAT_ROOM=… node node.mjs
//
// Run it in a project where `@serverless-chat/sdk` is installed (see the SDK's README, "Install").
// Node 20 has no global WebSocket: install `ws` beside the SDK and it is used without being passed.
import { createRoomClient } from '@serverless-chat/sdk';

const [
  baseUrl = process.env.CHAT_URL,
  token = process.env.CHAT_TOKEN,
  roomId = process.env.CHAT_ROOM,
  content = process.env.CHAT_MESSAGE ?? 'Hello from the SDK example',
] = process.argv.slice(2);
if (!baseUrl || !token || !roomId) {
  console.error('Usage: node node.mjs <baseUrl> <userToken> <roomId> [message]  (or CHAT_URL, CHAT_TOKEN, CHAT_ROOM, CHAT_MESSAGE)');
  process.exit(2);
}

const room = createRoomClient({ baseUrl, token, roomId });
room.on('state', (state, previous) => console.log(`state ${previous} → ${state}`));
room.on('message', (message) => console.log(`message ${message.id} from ${message.userId}: ${message.content}`));
room.on('error', (error) => console.error(`error ${error.code}: ${error.message}`));

// The first state after `connecting` says how it went: `connected` is the WebSocket, `sse` and
// `polling` the fallbacks (sends go over REST there), `disconnected` a refusal (see lastError).
const opened = await new Promise((resolve) => {
  const stop = room.on('state', (state) => {
    if (state === 'reconnecting') return;
    stop();
    resolve(state);
  });
});
if (opened === 'disconnected') {
  console.error(`Could not join ${roomId}: ${room.lastError?.code} ${room.lastError?.message}`);
  process.exit(1);
}

try {
  const stored = await room.send(content);
  console.log(`sent ${stored.id} acknowledged over ${room.state === 'connected' ? 'WebSocket' : 'REST'}`);
} catch (error) {
  console.error(`send failed: ${error.code ?? ''} ${error.message}`);
  room.close();
  process.exit(1);
}

console.log('listening; Ctrl-C to disconnect');
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    room.close();
    // The process ends once the socket has closed; a connection a proxy holds open does not keep it.
    setTimeout(() => process.exit(0), 2000).unref();
  });
}
