import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';

export interface SwitchableProxy {
  /** `http://127.0.0.1:<port>`, stable across stop and start. */
  readonly endpoint: string;
  /** Whether connections are passed through. */
  readonly running: boolean;
  /** Refuses connections and cuts the open ones, as an outage of the service behind it would. */
  stop(): Promise<void>;
  /** Passes connections through again, on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A TCP pass-through on a loopback port in front of a local stand-in, which can be stopped and
 * started again: the local runtime puts the event topic behind one, so tests and benchmarks can
 * take the fan-out down while messages are written, without losing the stand-in's queues.
 */
export async function startSwitchableProxy(targetUrl: string): Promise<SwitchableProxy> {
  const target = new URL(targetUrl);
  const open = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const next = createServer((client) => {
        const upstream = tcpConnect(Number(target.port), target.hostname);
        for (const socket of [client, upstream]) {
          open.add(socket);
          socket.once('close', () => open.delete(socket));
          socket.on('error', () => {
            client.destroy();
            upstream.destroy();
          });
        }
        client.pipe(upstream).pipe(client);
      });
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => {
        port = (next.address() as { port: number }).port;
        server = next;
        resolve();
      });
    });
  const stop = async () => {
    const current = server;
    server = undefined;
    for (const socket of open) socket.destroy();
    if (current) await new Promise<void>((resolve) => current.close(() => resolve()));
  };

  await listen();
  return {
    get endpoint() {
      return `http://127.0.0.1:${port}`;
    },
    get running() {
      return server !== undefined;
    },
    stop,
    start: async () => {
      if (!server) await listen();
    },
    close: stop,
  };
}
