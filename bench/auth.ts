/**
 * Sign-in and stream caps: what a sign-in attempt costs in CPU (scrypt, in the service process and
 * its threadpool) for each way it can go, so that a wrong guess at a user or a project is as dear
 * as a wrong password; the DynamoDB requests of a sign-in; and those that take and give back an
 * SSE stream's leases of its user's and project's caps.
 */
import type { Bench, Context } from './harness';
import { fmt, table } from './harness';
import { type Recorder, recording } from './instrument';
import { countBy, createProject, median, ownCpuMs, round, sleep } from './util';

/** Attempts of each kind, interleaved so that a busy moment of the machine falls on all kinds alike. */
const ATTEMPTS = 8;
/** Streams opened and closed one after the other (after one that joins the room). */
const STREAMS = 5;
const PASSWORD = 'correct horse battery staple';
const GOALS = {
  /** Unknown user and unknown project against a known user's wrong password: no timing oracle. */
  cpuRatio: 0.8,
  /** One transaction takes both leases (the user's and the project's). */
  leaseTakeRequests: 1,
  /** Each holder's lease is given back by its own update, both at once. */
  leaseReleaseRequests: 2,
} as const;

const KINDS = ['correct', 'wrongPassword', 'unknownUser', 'unknownProject'] as const;
type Kind = (typeof KINDS)[number];
const KIND_NAMES: Record<Kind, string> = {
  correct: 'correct password',
  wrongPassword: 'known user, wrong password',
  unknownUser: 'unknown user',
  unknownProject: 'unknown project',
};

const commandsOf = (calls: readonly { command: string }[]) => calls.map((call) => call.command);
const isLeaseCall = (call: { partitionKeys: readonly string[] }) => call.partitionKeys.some((pk) => pk.endsWith('#STREAMS'));

async function measure({ service, log }: Context) {
  const { api } = service;
  const { config } = await import('#shared/config');
  const { PASSWORD_COST } = await import('#domain/auth/passwords');
  const settable = config as { RATE_LIMIT_SIGNIN_PER_IP_PER_MINUTE: number };
  const before = settable.RATE_LIMIT_SIGNIN_PER_IP_PER_MINUTE;
  // Every attempt comes from 127.0.0.1, and the per-IP limit is not what is measured.
  settable.RATE_LIMIT_SIGNIN_PER_IP_PER_MINUTE = 1_000_000;
  try {
    const project = await createProject(api, 'auth-bench');
    const setPassword = (userId: string) =>
      api.expect(204, `/users/${userId}/credentials`, { method: 'PUT', apiKey: project.apiKey, body: { password: PASSWORD } });
    // Each wrong password goes to its own user, so none of them reaches the lockout threshold.
    const wrongUsers = Array.from({ length: ATTEMPTS }, (_, index) => `wrong-${index}`);
    for (const userId of ['signer', 'locked', ...wrongUsers]) await setPassword(userId);

    const signIn = (body: { projectId: string; userId: string; password: string }) => api.request('/auth/signin', { body });
    const attempt = (kind: Kind, index: number) => {
      switch (kind) {
        case 'correct':
          return signIn({ projectId: project.projectId, userId: 'signer', password: PASSWORD });
        case 'wrongPassword':
          return signIn({ projectId: project.projectId, userId: wrongUsers[index] as string, password: `${PASSWORD}!` });
        case 'unknownUser':
          return signIn({ projectId: project.projectId, userId: `nobody-${index}`, password: PASSWORD });
        case 'unknownProject':
          return signIn({ projectId: `no-such-project-${index}`, userId: 'signer', password: PASSWORD });
      }
    };
    const expected = (kind: Kind) => (kind === 'correct' ? 200 : 401);
    const checked = async (kind: Kind, index: number) => {
      const answer = await attempt(kind, index);
      if (answer.status !== expected(kind))
        throw new Error(`auth bench: ${kind} sign-in answered ${answer.status} ${JSON.stringify(answer.body)}`);
    };

    // A warm instance: the project is cached, the code paths compiled.
    await checked('correct', 0);
    await signIn({ projectId: project.projectId, userId: 'warm-up', password: PASSWORD });
    const cpuMs: Record<Kind, number[]> = { correct: [], wrongPassword: [], unknownUser: [], unknownProject: [] };
    const wallMs: Record<Kind, number[]> = { correct: [], wrongPassword: [], unknownUser: [], unknownProject: [] };
    for (let index = 0; index < ATTEMPTS; index++) {
      for (const kind of KINDS) {
        const cpu = ownCpuMs();
        const started = performance.now();
        await checked(kind, index);
        wallMs[kind].push(performance.now() - started);
        cpuMs[kind].push(ownCpuMs() - cpu);
      }
    }
    const cost = Object.fromEntries(
      KINDS.map((kind) => [kind, { cpuMsP50: round(median(cpuMs[kind]), 1), wallMsP50: round(median(wallMs[kind]), 1) }]),
    ) as Record<Kind, { cpuMsP50: number; wallMsP50: number }>;
    log(
      `  CPU ms per attempt (p50): ${KINDS.map((kind) => `${kind} ${cost[kind].cpuMsP50}`).join(', ')}; wall p50 ${KINDS.map((kind) => `${kind} ${cost[kind].wallMsP50}`).join(', ')}`,
    );

    // The stream poller may still be handing the failure records above to the workers.
    await sleep(1000);
    const record = (work: () => Promise<unknown>) =>
      recording({ dynamo: service.clients.dynamo, sqs: service.clients.sqs }, async (recorder) => {
        await work();
        return commandsOf(recorder.dynamo);
      });
    const correct = await record(() => checked('correct', 0));
    const wrongPassword = await record(() => signIn({ projectId: project.projectId, userId: 'locked', password: 'wrong' }));
    // 'locked' now has one failure on record, which this success clears.
    const correctAfterFailure = await record(async () => {
      const answer = await signIn({ projectId: project.projectId, userId: 'locked', password: PASSWORD });
      if (answer.status !== 200) throw new Error(`auth bench: sign-in after a failure answered ${answer.status}`);
    });
    const unknownUser = await record(() => checked('unknownUser', ATTEMPTS));
    const unknownProject = await record(() => checked('unknownProject', ATTEMPTS));
    for (let failure = 1; failure < config.SIGNIN_LOCKOUT_THRESHOLD; failure++)
      await signIn({ projectId: project.projectId, userId: 'locked', password: 'wrong' });
    const lockingFailure = await record(() => signIn({ projectId: project.projectId, userId: 'locked', password: 'wrong' }));
    const whileLocked = await record(async () => {
      const answer = await signIn({ projectId: project.projectId, userId: 'locked', password: PASSWORD });
      if (answer.status !== 429) throw new Error(`auth bench: a locked sign-in answered ${answer.status}`);
    });
    const requests = { correct, correctAfterFailure, wrongPassword, lockingFailure, whileLocked, unknownUser, unknownProject };
    log(
      `  DynamoDB requests per sign-in: ${Object.entries(requests)
        .map(([name, commands]) => `${name} ${commands.length}`)
        .join(', ')}`,
    );

    const streams = await measureStreams(service, project, config.SSE_MAX_STREAMS_PER_USER);
    log(
      `  stream: ${streams.open.leaseRequests} lease requests to open (${streams.open.total} in all), ${streams.release.leaseRequests} to give back; refused: ${streams.refused.total}`,
    );
    return {
      attempts: ATTEMPTS,
      scrypt: { ...PASSWORD_COST, memoryMiB: (128 * PASSWORD_COST.N * PASSWORD_COST.r) / 1024 ** 2 },
      cost,
      lockoutThreshold: config.SIGNIN_LOCKOUT_THRESHOLD,
      requests: Object.fromEntries(
        Object.entries(requests).map(([name, commands]) => [name, { total: commands.length, byCommand: countBy(commands, 1, 0) }]),
      ) as Record<keyof typeof requests, { total: number; byCommand: Record<string, number> }>,
      streams,
    };
  } finally {
    settable.RATE_LIMIT_SIGNIN_PER_IP_PER_MINUTE = before;
  }
}

/**
 * Opens streams one at a time with `fetch`, reads their first bytes, aborts them and waits for the
 * leases to come back; then fills the user's cap and records the refusal of one more.
 */
async function measureStreams(service: Context['service'], project: Awaited<ReturnType<typeof createProject>>, userCap: number) {
  const { api, runtime } = service;
  const token = await project.token('streamer');
  const roomId = 'auth-bench-room';
  await api.expect(201, '/rooms', { token, body: { id: roomId, type: 'group' } });
  const url = `${runtime.baseUrl}/rooms/${roomId}/stream?token=${encodeURIComponent(token)}`;

  const open = async () => {
    const abort = new AbortController();
    const response = await fetch(url, { signal: abort.signal });
    if (response.status !== 200) throw new Error(`auth bench: stream answered ${response.status} ${await response.text()}`);
    const reader = response.body?.getReader();
    const first = await reader?.read();
    if (!first?.value?.length) throw new Error('auth bench: the stream sent nothing');
    return () => {
      abort.abort();
      reader?.cancel().catch(() => undefined);
    };
  };
  const releasedBy = async (recorder: Recorder, from: number, count: number) => {
    const deadline = Date.now() + 10_000;
    while (recorder.dynamo.slice(from).filter(isLeaseCall).length < count) {
      if (Date.now() > deadline) throw new Error('auth bench: the stream leases were not given back within 10 s');
      await sleep(10);
    }
  };

  // The first stream joins the room; the ones measured find the membership in place.
  await recording({ dynamo: service.clients.dynamo, sqs: service.clients.sqs }, async (recorder) => {
    (await open())();
    await releasedBy(recorder, 0, 1 + GOALS.leaseReleaseRequests);
  });
  const opened: string[] = [];
  const openLeases: string[] = [];
  const released: string[] = [];
  await recording({ dynamo: service.clients.dynamo, sqs: service.clients.sqs }, async (recorder) => {
    for (let index = 0; index < STREAMS; index++) {
      const start = recorder.dynamo.length;
      const close = await open();
      const atFirstBytes = recorder.dynamo.length;
      const openCalls = recorder.dynamo.slice(start, atFirstBytes);
      opened.push(...commandsOf(openCalls));
      openLeases.push(...commandsOf(openCalls.filter(isLeaseCall)));
      close();
      const leasesAtOpen = openCalls.filter(isLeaseCall).length;
      await releasedBy(recorder, start, leasesAtOpen + GOALS.leaseReleaseRequests);
      released.push(...commandsOf(recorder.dynamo.slice(atFirstBytes).filter(isLeaseCall)));
      // Whatever poll the closed stream had in flight ends before the next one opens.
      await sleep(50);
    }
  });

  // A full user: `userCap` streams open, one more is refused.
  const closers = [];
  for (let index = 0; index < userCap; index++) closers.push(await open());
  const refused = await recording({ dynamo: service.clients.dynamo, sqs: service.clients.sqs }, async (recorder) => {
    const answer = await fetch(url);
    const body = await answer.text();
    if (answer.status !== 429) throw new Error(`auth bench: a stream beyond the cap answered ${answer.status} ${body}`);
    return { all: commandsOf(recorder.dynamo), leases: commandsOf(recorder.dynamo.filter(isLeaseCall)) };
  });
  for (const close of closers) close();
  await sleep(500);

  const perStream = (commands: readonly string[]) => ({
    total: round(commands.length / STREAMS, 2),
    byCommand: countBy(commands, STREAMS, 2),
  });
  return {
    streams: STREAMS,
    userCap,
    open: { ...perStream(opened), leaseRequests: round(openLeases.length / STREAMS, 2), leaseByCommand: countBy(openLeases, STREAMS, 2) },
    release: { leaseRequests: round(released.length / STREAMS, 2), byCommand: countBy(released, STREAMS, 2) },
    refused: { total: refused.all.length, byCommand: countBy(refused.all, 1, 0), leaseByCommand: countBy(refused.leases, 1, 0) },
  };
}

type Auth = Awaited<ReturnType<typeof measure>>;

const ratio = (result: Auth, kind: Kind) => result.cost[kind].cpuMsP50 / result.cost.wrongPassword.cpuMsP50;
const commands = (byCommand: Record<string, number>) =>
  Object.entries(byCommand)
    .map(([command, count]) => `${command} ${count}`)
    .join(', ') || 'none';

export const auth: Bench<Auth> = {
  id: 'auth',
  name: 'Sign-in and stream caps',
  needs: 'service',
  run: measure,

  goals: (result) => [
    ...(['unknownUser', 'unknownProject'] as const).map((kind) => ({
      id: `auth-cpu-${kind}`,
      name: `Sign-in CPU of an ${KIND_NAMES[kind]} against a wrong password (no timing oracle)`,
      target: `≥ ${GOALS.cpuRatio} ×`,
      measured: `${fmt(ratio(result, kind), 2)} × (${fmt(result.cost[kind].cpuMsP50)} / ${fmt(result.cost.wrongPassword.cpuMsP50)} ms)`,
      pass: ratio(result, kind) >= GOALS.cpuRatio,
    })),
    {
      id: 'auth-stream-lease-take',
      name: "DynamoDB requests taking a stream's leases (user's and project's cap)",
      target: `≤ ${GOALS.leaseTakeRequests}`,
      measured: `${result.streams.open.leaseRequests} (${commands(result.streams.open.leaseByCommand)})`,
      pass: result.streams.open.leaseRequests <= GOALS.leaseTakeRequests,
    },
    {
      id: 'auth-stream-lease-release',
      name: "DynamoDB requests giving a stream's leases back",
      target: `≤ ${GOALS.leaseReleaseRequests}`,
      measured: `${result.streams.release.leaseRequests} (${commands(result.streams.release.byCommand)})`,
      pass: result.streams.release.leaseRequests <= GOALS.leaseReleaseRequests,
    },
  ],

  section(result) {
    const { cost, requests, streams, scrypt } = result;
    const costRows = KINDS.map((kind) => [
      KIND_NAMES[kind],
      fmt(cost[kind].cpuMsP50),
      kind === 'wrongPassword' ? '1' : fmt(ratio(result, kind), 2),
      fmt(cost[kind].wallMsP50),
    ]);
    const requestRows: [string, keyof Auth['requests']][] = [
      ['correct password', 'correct'],
      ['correct password, a failure on record (cleared)', 'correctAfterFailure'],
      ['known user, wrong password', 'wrongPassword'],
      [`wrong password reaching the lockout threshold (${result.lockoutThreshold}th failure: locks)`, 'lockingFailure'],
      ['while locked (429, no derivation)', 'whileLocked'],
      ['unknown user', 'unknownUser'],
      ['unknown project', 'unknownProject'],
    ];
    return `## Sign-in and stream caps

\`POST /auth/signin\` against the local runtime, ${result.attempts} attempts of each kind, interleaved, from a warm instance (the project cached). CPU is the service process's own (\`process.cpuUsage()\`, every thread, so the libuv threadpool where scrypt runs is counted; DynamoDB Local is another process) per attempt; scrypt N = 2^${Math.log2(scrypt.N)}, r = ${scrypt.r}, p = ${scrypt.p} needs 128 × N × r = ${fmt(scrypt.memoryMiB, 0)} MiB per derivation. The per-IP limit was raised for the run (every attempt comes from 127.0.0.1), and each wrong password went to its own user, below the lockout threshold.

${table('Attempt | CPU ms, p50 | × wrong password | Wall ms, p50', costRows)}

${table(
  'Sign-in | DynamoDB requests',
  requestRows.map(([name, key]) => [name, `${requests[key].total} (${commands(requests[key].byCommand)})`]),
)}

Streams: \`GET /rooms/{roomId}/stream?token=\` opened with \`fetch\`, read to its first bytes, aborted, and waited on until the leases were given back; ${streams.streams} streams one after the other (after one that joined the room), per stream:

${table('Stream | DynamoDB requests', [
  [
    'open, to the first bytes (the floor read, at times the first poll, the leases; token, room and membership from the instance caches)',
    `${streams.open.total} (${commands(streams.open.byCommand)})`,
  ],
  [
    "of which take the leases (user's and project's, one transaction)",
    `${streams.open.leaseRequests} (${commands(streams.open.leaseByCommand)})`,
  ],
  ['close: give the leases back', `${streams.release.leaseRequests} (${commands(streams.release.byCommand)})`],
  [
    `refused beyond the user's cap of ${streams.userCap} (429 \`too_many_streams\`)`,
    `${streams.refused.total} (${commands(streams.refused.byCommand)}): the floor read, the refused transaction, the sweep's read of the full lease item, the read for \`Retry-After\``,
  ],
])}

An unknown user or project pays the same scrypt derivation as a wrong password (against a stand-in hash), so neither the answer nor its CPU time says who exists. An unknown user makes the same DynamoDB requests as a wrong password (its failures are counted and locked alike); an unknown project makes two fewer (there is no tenant to count failures in), a few ms of wall time against the derivation's hundreds. A stream takes both leases in one conditional transaction and gives each back with its own \`DELETE\` from the set, both at once: two single-item updates cost 1 write unit each, where a transaction would cost 2 per item, and a lease that is not given back expires on its own.`;
  },
};
