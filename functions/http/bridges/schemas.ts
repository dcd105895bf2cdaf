import { BRIDGE_PLATFORMS } from '#shared/db/bridge';
import { BRIDGE_ID_PATTERN, idSchema } from '#shared/ids';
import * as z from '#shared/schema';

/**
 * A bridge in a path, on the admin routes and the platform webhooks alike: a malformed id is a 400
 * naming `path.bridgeId`; a well-formed one of no bridge (or, on a webhook, of another platform's)
 * is 404 `bridge_not_found`.
 */
export const bridgeParams = z.object({ bridgeId: z.string().check(z.regex(BRIDGE_ID_PATTERN, 'must be a bridge id')) });

const secret = z.string().check(z.minLength(1), z.maxLength(512));
/** Slack channel and team ids, Discord snowflakes. */
const platformId = z.string().check(z.regex(/^[A-Za-z0-9]{1,64}$/, 'must be 1-64 letters and digits'));

/** Every platform's fields; which of them a platform takes is the domain's check (`bridge_settings_invalid`). */
export const bridgeFields = {
  channelId: z.optional(platformId),
  teamId: z.optional(platformId),
  signingSecret: z.optional(secret),
  botToken: z.optional(secret),
  publicKey: z.optional(z.string().check(z.regex(/^[0-9a-fA-F]{64}$/, 'must be an Ed25519 public key in 64 hex characters'))),
  webhookUrl: z.optional(z.string().check(z.maxLength(2048))),
  hsToken: z.optional(secret),
  asToken: z.optional(secret),
  homeserverUrl: z.optional(z.string().check(z.maxLength(2048))),
  matrixRoomId: z.optional(z.string().check(z.regex(/^![^\s:]{1,200}:[^\s]{1,200}$/, 'must be a Matrix room id (!opaque:server)'))),
};

export const createBridgeBody = z.strictObject({ platform: z.enum(BRIDGE_PLATFORMS), roomId: idSchema, ...bridgeFields });
export const updateBridgeBody = z.strictObject(bridgeFields);
