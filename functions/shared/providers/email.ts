import { SESv2Client, SendEmailCommand } from '@aws-sdk/client-sesv2';
import { sdkClientDefaults } from '#shared/aws-clients';

/**
 * E-mail through Amazon SES v2. The endpoint is the SDK's for the function's region, or
 * `AWS_ENDPOINT_URL_SESV2` (the local runtime points it at its SES emulator); the sender is the
 * identity the `email:digest` binding names, the only one the function may send from.
 */
const ses = new SESv2Client({ maxAttempts: 3, ...sdkClientDefaults });

export interface OutgoingEmail {
  readonly from: string;
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  /** Headers such as `List-Unsubscribe`, which mail clients show as a button. */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Sends one e-mail with a plain-text and an HTML body: SES's message id. */
export async function sendEmail(email: OutgoingEmail): Promise<string | undefined> {
  const { MessageId } = await ses.send(
    new SendEmailCommand({
      FromEmailAddress: email.from,
      Destination: { ToAddresses: [email.to] },
      Content: {
        Simple: {
          Subject: { Data: email.subject, Charset: 'UTF-8' },
          Body: { Text: { Data: email.text, Charset: 'UTF-8' }, Html: { Data: email.html, Charset: 'UTF-8' } },
          ...(email.headers ? { Headers: Object.entries(email.headers).map(([Name, Value]) => ({ Name, Value })) } : {}),
        },
      },
    }),
  );
  return MessageId;
}
