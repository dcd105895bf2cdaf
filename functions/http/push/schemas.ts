import { DEVICE_ID_PATTERN, DEVICE_PLATFORMS } from '#shared/db/push';
import { PUSH_ID_PATTERN } from '#shared/db/push-record';
import * as z from '#shared/schema';

/**
 * Device tokens go into provider URLs (`/3/device/<token>`) and JSON, so only their real alphabets
 * pass: APNs tokens are hex (32 bytes today, longer allowed), FCM registration tokens
 * letters, digits and `_ - : .`.
 */
const APNS_TOKEN = /^[0-9a-fA-F]{64,200}$/;
const FCM_TOKEN = /^[A-Za-z0-9_:.-]{16,4096}$/;

export const registerDeviceBody = z
  .strictObject({ platform: z.enum(DEVICE_PLATFORMS), token: z.string().check(z.minLength(1), z.maxLength(4096)) })
  .check(
    z.superRefine((body, context) => {
      const apns = body.platform === 'apns' || body.platform === 'ios';
      if (!(apns ? APNS_TOKEN : FCM_TOKEN).test(body.token)) {
        context.issues.push({
          code: 'custom',
          path: ['token'],
          message: apns ? 'must be an APNs device token (64 or more hex digits)' : 'must be an FCM registration token',
          input: body.token,
        });
      }
    }),
  );

export const deviceParams = z.object({ deviceId: z.string().check(z.regex(DEVICE_ID_PATTERN, 'must be a device id')) });

/** base64url without padding, decoding to exactly `bytes` bytes. */
const base64url = (bytes: number, what: string) =>
  z.string().check(
    z.regex(/^[A-Za-z0-9_-]+={0,2}$/, 'must be base64url'),
    z.refine((value) => Buffer.from(value, 'base64url').length === bytes, `must be ${what} (${bytes} bytes)`),
  );

export const subscribeBody = z.strictObject({
  endpoint: z.string().check(z.minLength(1), z.maxLength(2048)),
  keys: z.strictObject({
    p256dh: base64url(65, 'an uncompressed P-256 public key').check(
      z.refine((value) => Buffer.from(value, 'base64url')[0] === 0x04, 'must be an uncompressed P-256 point (0x04 first)'),
    ),
    auth: base64url(16, 'the subscription auth secret'),
  }),
  userAgent: z.optional(z.string().check(z.maxLength(512))),
});

/** An id (`ws_...`) or the endpoint URL itself, percent-encoded into the path. */
export const unsubscribeParams = z.object({ idOrEndpoint: z.string().check(z.minLength(1), z.maxLength(2048)) });

export const deliveryAckBody = z.strictObject({ pushId: z.string().check(z.regex(PUSH_ID_PATTERN, 'must be a push id')) });

const optionalText = (max: number) => z.optional(z.nullable(z.string().check(z.minLength(1), z.maxLength(max))));

export const putConfigBody = z.strictObject({
  environment: z._default(z.string().check(z.regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1-64 letters, digits and _ . -')), 'production'),
  fcmServerKey: z.optional(
    z.nullable(z.string().check(z.minLength(1), z.maxLength(4096), z.regex(/^\S+$/, 'must be one key without spaces'))),
  ),
  fcmProjectId: z.optional(z.nullable(z.string().check(z.regex(/^[a-z][a-z0-9-]{4,61}[a-z0-9]$/, 'must be a Firebase project id')))),
  fcmServiceAccountJson: optionalText(16_384),
  apnsBundleId: z.optional(z.nullable(z.string().check(z.regex(/^[A-Za-z0-9.-]{1,155}$/, 'must be a bundle id')))),
  apnsUseSandbox: z.optional(z.boolean()),
  apnsKeyId: z.optional(z.nullable(z.string().check(z.regex(/^[A-Z0-9]{10}$/, 'must be a 10-character key id')))),
  apnsTeamId: z.optional(z.nullable(z.string().check(z.regex(/^[A-Z0-9]{10}$/, 'must be a 10-character team id')))),
  apnsPrivateKey: optionalText(4096),
  webPushEnabled: z.optional(z.boolean()),
});
