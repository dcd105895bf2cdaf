import { BadRequestError } from '#shared/errors';

/** The signature from the body, else `X-Service-Signature`, else its alias `X-Webhook-Signature`. */
export function signatureFrom(bodySignature: string | undefined, headers: Readonly<Record<string, string | undefined>>): string {
  const signature = bodySignature ?? headers['x-service-signature'] ?? headers['x-webhook-signature'];
  if (!signature) {
    throw new BadRequestError('A signature is required (body field, X-Service-Signature or X-Webhook-Signature)', [
      { field: 'body.signature', message: 'required' },
    ]);
  }
  return signature.trim();
}
