import * as z from '#shared/schema';

/**
 * A customer's secret as an item stores it (`#domain/webhooks/secrets`): plaintext without the
 * `webhook-key` secret, else AES-256-GCM sealed, with the id of the key that sealed it.
 */
export const storedSecret = z.object({
  secret: z.optional(z.string()),
  secretCiphertext: z.optional(z.string()),
  secretIv: z.optional(z.string()),
  secretKeyId: z.optional(z.string()),
});
