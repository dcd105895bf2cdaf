import type { BridgeItem } from '#shared/db/bridge';
import { HttpError } from '#shared/errors';
import { DISCORD_NO_MENTIONS, fitDiscordContent } from '#shared/providers/discord';
import * as z from '#shared/schema';
import { bridgeForInbound } from './bridges';
import { bridgedUserId, postBridged } from './inbound';
import { verifyDiscordRequest } from './inbound-signatures';

/**
 * Discord's interactions endpoint (https://discord.com/developers/docs/interactions/receiving-and-responding):
 * the PING Discord checks the endpoint with, and the application command (`/chat message:<text>`)
 * or modal people post with, answered so the channel shows the text.
 */

/** Interaction types (https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-object-interaction-type). */
const PING = 1;
const APPLICATION_COMMAND = 2;
const APPLICATION_COMMAND_AUTOCOMPLETE = 4;
const MODAL_SUBMIT = 5;
/** Interaction callback types. */
const PONG = 1;
const CHANNEL_MESSAGE_WITH_SOURCE = 4;
const APPLICATION_COMMAND_AUTOCOMPLETE_RESULT = 8;
/** Message flag: only the person who used the command sees the answer. */
const EPHEMERAL = 64;
/** Command option type of a string; text inputs' component type. */
const STRING_OPTION = 3;
const TEXT_INPUT = 4;

const snowflake = z.string().check(z.regex(/^\d{1,20}$/, 'must be a Discord id'));
const discordUser = z.object({ id: snowflake });

const optionFields = { name: z.string(), type: z.number(), value: z.optional(z.unknown()) };
/**
 * A command's options, as deep as Discord nests them (a subcommand group holds subcommands, which
 * hold options) and no deeper: a schema that followed any depth would recurse for as long as a
 * body nests, past the stack.
 */
const commandOptions = z.optional(
  z
    .array(
      z.object({
        ...optionFields,
        options: z.optional(
          z
            .array(z.object({ ...optionFields, options: z.optional(z.array(z.object(optionFields)).check(z.maxLength(25))) }))
            .check(z.maxLength(25)),
        ),
      }),
    )
    .check(z.maxLength(25)),
);
type CommandOption = { readonly type: number; readonly value?: unknown; readonly options?: readonly CommandOption[] };

export const discordInteraction = z.object({
  id: snowflake,
  type: z.number().check(z.int()),
  guild_id: z.optional(snowflake),
  channel_id: z.optional(snowflake),
  member: z.optional(z.object({ user: z.optional(discordUser) })),
  user: z.optional(discordUser),
  data: z.optional(
    z.object({
      options: commandOptions,
      /** A modal's rows of text inputs (or label components holding one); read by `modalText`. */
      components: z.optional(z.array(z.unknown()).check(z.maxLength(25))),
    }),
  ),
});
export type DiscordInteraction = z.infer<typeof discordInteraction>;

export type InteractionResponse =
  | { type: typeof PONG }
  | { type: typeof CHANNEL_MESSAGE_WITH_SOURCE; data: { content: string; flags?: number; allowed_mentions: typeof DISCORD_NO_MENTIONS } }
  | { type: typeof APPLICATION_COMMAND_AUTOCOMPLETE_RESULT; data: { choices: [] } };

/** A message in the channel; it pings nobody, whatever the text names. */
const channelMessage = (content: string, flags?: number): InteractionResponse => ({
  type: CHANNEL_MESSAGE_WITH_SOURCE,
  data: { content: fitDiscordContent(content), ...(flags ? { flags } : {}), allowed_mentions: DISCORD_NO_MENTIONS },
});
const onlyForCaller = (content: string) => channelMessage(content, EPHEMERAL);

/** The string options of a command, subcommands' included, in order: `/chat message:<text>` gives `<text>`. */
function commandText(options: readonly CommandOption[] = []): string {
  return options
    .flatMap((option) =>
      option.type === STRING_OPTION && typeof option.value === 'string' ? [option.value] : [commandText(option.options)],
    )
    .filter((text) => text !== '')
    .join('\n');
}

/** The values of a modal's text inputs, in order, found in action rows or label components. */
function modalText(components: readonly unknown[] = [], depth = 0): string {
  const values: string[] = [];
  for (const component of components) {
    if (typeof component !== 'object' || component === null || depth > 3) continue;
    const { type, value, components: children, component: child } = component as Record<string, unknown>;
    if (type === TEXT_INPUT && typeof value === 'string') values.push(value);
    else if (Array.isArray(children)) values.push(modalText(children, depth + 1));
    else if (child !== undefined) values.push(modalText([child], depth + 1));
  }
  return values.filter((text) => text !== '').join('\n');
}

/** The bridge `bridgeId` names, when the request carries its application's Ed25519 signature; 404 or 401 otherwise. */
export async function verifiedDiscordBridge(bridgeId: string, headers: Readonly<Record<string, string | undefined>>, rawBody: Buffer) {
  const bridge = await bridgeForInbound('discord', bridgeId);
  verifyDiscordRequest(bridge.settings.publicKey ?? '', headers, rawBody);
  return bridge;
}

/**
 * Answers Discord's PING; posts a command's or a modal's text to the room and shows it in the
 * channel (the relay leaves a message that came in through this bridge alone, so it appears
 * once). Discord shows an endpoint's error as "This interaction failed", so what the room refuses
 * (the sender rate limit, a room gone) is told to the person alone instead.
 */
export async function receiveDiscordInteraction(
  bridge: BridgeItem,
  interaction: DiscordInteraction,
  sourceIp: string,
): Promise<InteractionResponse> {
  if (interaction.type === PING) return { type: PONG };
  if (interaction.type === APPLICATION_COMMAND_AUTOCOMPLETE)
    return { type: APPLICATION_COMMAND_AUTOCOMPLETE_RESULT, data: { choices: [] } };
  if (interaction.type !== APPLICATION_COMMAND && interaction.type !== MODAL_SUBMIT) {
    return onlyForCaller('The room bridge takes the /chat command and modals only.');
  }
  // A bot bridge posts to one channel: what is said elsewhere stays there.
  if (bridge.settings.channelId !== undefined && interaction.channel_id !== bridge.settings.channelId) {
    return onlyForCaller('This channel is not linked to a room.');
  }
  const author = interaction.member?.user ?? interaction.user;
  const text = interaction.type === MODAL_SUBMIT ? modalText(interaction.data?.components) : commandText(interaction.data?.options);
  if (!author || text.trim() === '') return onlyForCaller('Nothing to post: give the command some text.');
  try {
    await postBridged(
      bridge,
      { eventId: interaction.id, authorId: bridgedUserId('discord', interaction.guild_id ?? 'dm', author.id), text },
      sourceIp,
    );
  } catch (error) {
    if (error instanceof HttpError && error.statusCode < 500) return onlyForCaller(`Not posted: ${error.message}`);
    throw error;
  }
  return channelMessage(text);
}
