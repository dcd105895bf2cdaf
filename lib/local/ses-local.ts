import type { AddressInfo } from 'node:net';
import sesEmulator from 'aws-ses-v2-local';

/** The CommonJS module's default export, however the loader (vitest, tsx) hands it over. */
const startSesEmulator: typeof sesEmulator =
  typeof sesEmulator === 'function' ? sesEmulator : (sesEmulator as unknown as { default: typeof sesEmulator }).default;

export interface SesLocal {
  /** The SES v2 API (`AWS_ENDPOINT_URL_SESV2` of the handlers). */
  readonly endpoint: string;
  /** The emulator's web mailbox; `GET <endpoint>/store` lists the received e-mails as JSON. */
  readonly mailboxUrl: string;
  stop(): Promise<void>;
}

/**
 * The SES stand-in: `aws-ses-v2-local` on a free loopback port. It takes `SendEmail` as SES v2 does
 * (any SigV4 `Authorization` header, no identity checks), keeps every e-mail in memory and shows
 * them in a web mailbox.
 */
export async function startSesLocal(): Promise<SesLocal> {
  const server = await startSesEmulator({ host: '127.0.0.1', port: 0 });
  const { port } = server.address() as AddressInfo;
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    mailboxUrl: `${endpoint}/`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
