import type { Principal } from '#shared/auth';
import { BadRequestError } from '#shared/errors';
import type { MessageInput } from './message-input';
import { type PinResult, pinMessage } from './pins';
import { type SendContext, type SendResult, sendMessage } from './pipeline';

/** `/pin`, alone (in a reply: pins the parent) or with a message id. Anything else after `/pin ` is a malformed command. */
const PIN_COMMAND = /^\/pin(?:\s+(\S+))?$/;
const MESSAGE_ID = /^[1-9]\d{0,15}$/;

export interface CommandResult extends PinResult {
  readonly command: 'pin';
}

/** What posting a message did: stored it, or ran the slash command it was (which stores nothing). */
export type PostOutcome =
  | { readonly kind: 'message'; readonly sent: SendResult }
  | { readonly kind: 'command'; readonly result: CommandResult };

/** The message id a `/pin` command names, `undefined` when the content is no `/pin` command. */
function pinTarget(input: MessageInput): number | undefined {
  const match = PIN_COMMAND.exec(input.content.trim());
  if (!match) return undefined;
  const argument = match[1];
  if (argument === undefined) {
    if (input.parent_id == null) {
      throw new BadRequestError('`/pin` pins the message it replies to: send it with parent_id, or as `/pin <messageId>`', [
        { field: 'body.parent_id', message: 'is required for `/pin` without a message id' },
      ]);
    }
    return input.parent_id;
  }
  if (!MESSAGE_ID.test(argument) || !Number.isSafeInteger(Number(argument))) {
    throw new BadRequestError('A pin command is `/pin` (as a reply) or `/pin <messageId>`', [
      { field: 'body.content', message: 'must be `/pin` or `/pin <messageId>`' },
    ]);
  }
  return Number(argument);
}

/**
 * The entry of messages posted by people (`POST /messages`, `POST /rooms/{roomId}/messages`, the
 * WebSocket `message` frame): a room slash command runs instead of being stored; anything else goes
 * through the message pipeline. Imports and agents call the pipeline directly: their content is
 * stored as written.
 */
export async function postMessage(principal: Principal, input: MessageInput, context: SendContext): Promise<PostOutcome> {
  const target = pinTarget(input);
  if (target === undefined) return { kind: 'message', sent: await sendMessage(principal, input, context) };
  return { kind: 'command', result: { command: 'pin', ...(await pinMessage(principal, input.roomId, target, 'command')) } };
}
