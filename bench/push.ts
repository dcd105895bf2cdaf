/**
 * Push notifications: the CPU of encrypting and signing one web push, pushes per second from one
 * sender invocation, message → push receipt latency at a room of 100 subscribed members, and the
 * DynamoDB requests a message costs to find its recipients at 10 and 1,000 subscribed members.
 * Pushes go to a local push service of the tests (`test/support/push/web-push-service.ts`) that
 * answers 201 at once, so the figures are the service's own work, not a push service's.
 */
import type { Bench, Context } from './harness';
import { recording } from './instrument';
import { countBy, createProject, latencySummary, round, sleep, sum } from './util';

const ENCRYPTIONS = 500;
const LATENCY_MEMBERS = 100;
const LATENCY_MESSAGES = 20;
const LATENCY_INTERVAL_MS = 250;
const SENDER_BATCHES = 10;
const SENDER_BATCH_SIZE = 50;
const ROSTER_SIZES = [10, 1000] as const;
const GOALS = { encryptCpuMs: 2, recipientRequests: 2 } as const;

async function measure({ service, log }: Context) {
  const { api, runtime } = service;
  const { startStatusPushService } = await import('../test/support/push/web-push-service.ts');
  const { encryptWebPush, generateVapidKeys } = await import('#shared/providers/web-push');
  const { sendPushBatch } = await import('#domain/push/send');
  const { roomRoster: pushRoster } = await import('#shared/db/push-roster');
  const pushService = await startStatusPushService();
  const arrivals = new Map<string, number[]>();
  const recordArrival = () => {
    for (const request of pushService.requests.slice(seen)) {
      const list = arrivals.get(request.endpoint) ?? [];
      list.push(performance.now());
      arrivals.set(request.endpoint, list);
    }
    seen = pushService.requests.length;
  };
  let seen = 0;
  try {
    // 1. Encryption (aes128gcm) and VAPID signing, the CPU each push costs before it leaves.
    const vapid = { subject: 'mailto:bench@example.com', ...generateVapidKeys() };
    const target = pushService.subscription(201);
    const payload = JSON.stringify({
      type: 'message',
      pushId: 'push_0123456789abcdef0123',
      roomId: 'bench',
      messageId: 1,
      preview: 'x'.repeat(120),
    });
    for (let index = 0; index < 50; index++) encryptWebPush(target, payload, vapid);
    const cpuBefore = process.cpuUsage();
    const encryptStarted = performance.now();
    for (let index = 0; index < ENCRYPTIONS; index++) encryptWebPush(target, payload, vapid);
    const cpu = process.cpuUsage(cpuBefore);
    const encrypt = {
      cpuMsPerPush: round((cpu.user + cpu.system) / 1000 / ENCRYPTIONS, 3),
      wallMsPerPush: round((performance.now() - encryptStarted) / ENCRYPTIONS, 3),
      payloadBytes: Buffer.byteLength(payload),
    };
    log(`  encrypt + sign: ${encrypt.cpuMsPerPush} ms CPU per push`);

    // A project whose members subscribe through the API.
    const project = await createProject(api, 'push-bench');
    const subscribeMembers = async (prefix: string, count: number) => {
      const members: { userId: string; token: string; endpoint: string }[] = [];
      for (let start = 0; start < count; start += 25) {
        members.push(
          ...(await Promise.all(
            Array.from({ length: Math.min(25, count - start) }, async (_, offset) => {
              const userId = `${prefix}-${start + offset}`;
              const token = await project.token(userId);
              const subscription = pushService.subscription(201);
              await api.expect(201, '/push/web/subscribe', { token, body: { endpoint: subscription.endpoint, keys: subscription.keys } });
              return { userId, token, endpoint: subscription.endpoint };
            }),
          )),
        );
      }
      return members;
    };
    const roomWith = async (roomId: string, userIds: readonly string[]) => {
      await api.expect(201, '/rooms', { apiKey: project.apiKey, body: { id: roomId, type: 'group', members: userIds.slice(0, 100) } });
      for (let start = 100; start < userIds.length; start += 25) {
        await Promise.all(
          userIds
            .slice(start, start + 25)
            .map((userId) => api.expect(201, `/rooms/${roomId}/members`, { apiKey: project.apiKey, body: { userId, role: 'member' } })),
        );
      }
    };

    // 2. Finding the recipients: the roster Query, at 10 and 1,000 subscribed members.
    let realTargets: Awaited<ReturnType<typeof pushRoster>> = [];
    const rosters: Record<string, { members: number; requests: number; readUnits: number; byCommand: Record<string, number> }> = {};
    // Rosters follow the joins' events (PushRosterKeeper), so the consumers run from here on.
    runtime.startConsumers();
    for (const size of ROSTER_SIZES) {
      const members = await subscribeMembers(`roster${size}`, size);
      const roomId = `roster-${size}`;
      await roomWith(
        roomId,
        members.map((member) => member.userId),
      );
      await waitForRoster(() => pushRoster(project.projectId, roomId), size);
      // The joins' events are still being handled in this process (their subscribers read the
      // table through the same client): only once those are done does the recorder see the roster
      // read alone.
      await quietClients(service.clients, log);
      const calls = await recording({ dynamo: service.clients.dynamo, sqs: service.clients.sqs }, async (recorder) => {
        const entries = await pushRoster(project.projectId, roomId);
        if (entries.length !== size) throw new Error(`push bench: the roster of ${roomId} has ${entries.length} entries, not ${size}`);
        realTargets = entries;
        return recorder.dynamo;
      });
      rosters[size] = {
        members: size,
        requests: calls.length,
        readUnits: round(sum(calls.map((call) => call.readUnits)), 1),
        byCommand: countBy(
          calls.map((call) => call.command),
          1,
          0,
        ),
      };
      log(`  recipients of a room of ${size} subscribed members: ${calls.length} request(s)`);
    }

    // 3. One sender invocation's rate: batches of 50 deliveries, one after the other.
    // Real subscriptions of the 1,000-member room, so every outcome lands on a stored row as in production.
    const senderTargets = realTargets
      .slice(0, SENDER_BATCH_SIZE)
      .flatMap((entry) => entry.targets.map((target) => ({ userId: entry.userId, target })));
    const batch = {
      projectId: project.projectId,
      message: { roomId: 'bench', messageId: 1, userId: 'author', preview: 'bench' },
      deliveries: senderTargets,
    };
    await sendPushBatch(batch);
    const senderStarted = performance.now();
    const senderCalls = await recording({ dynamo: service.clients.dynamo, sqs: service.clients.sqs }, async (recorder) => {
      for (let index = 0; index < SENDER_BATCHES; index++) await sendPushBatch(batch);
      return recorder.dynamo;
    });
    const senderSeconds = (performance.now() - senderStarted) / 1000;
    const pushes = SENDER_BATCHES * SENDER_BATCH_SIZE;
    const sender = {
      pushes,
      pushesPerSecond: round(pushes / senderSeconds, 0),
      dynamoRequestsPerPush: round(senderCalls.length / pushes, 2),
      dynamoByCommand: countBy(
        senderCalls.map((call) => call.command),
        pushes,
        2,
      ),
    };
    log(`  one sender: ${sender.pushesPerSecond} pushes/s`);

    // 4. Message → push receipt, room of 100 subscribed members, through the event stream, the
    // dispatcher and (past PUSH_INLINE_RECIPIENTS) the push queue's senders.
    const members = await subscribeMembers('latency', LATENCY_MEMBERS);
    const author = { userId: 'latency-author', token: await project.token('latency-author') };
    const roomId = 'latency-room';
    await roomWith(roomId, [author.userId, ...members.map((member) => member.userId)]);
    await waitForRoster(() => pushRoster(project.projectId, roomId), members.length);
    const endpoints = new Set(members.map((member) => member.endpoint));
    const latencies: number[] = [];
    const poller = setInterval(recordArrival, 2);
    try {
      await api.expect(201, '/messages', { token: author.token, body: { roomId, content: 'warm-up' } });
      await waitUntil(() => members.every((member) => (arrivals.get(member.endpoint)?.length ?? 0) >= 1), 30_000);
      for (let index = 0; index < LATENCY_MESSAGES; index++) {
        const sentAt = performance.now();
        const expected = index + 2;
        await api.expect(201, '/messages', { token: author.token, body: { roomId, content: `latency ${index}` } });
        await waitUntil(() => members.every((member) => (arrivals.get(member.endpoint)?.length ?? 0) >= expected), 30_000);
        for (const endpoint of endpoints) latencies.push(((arrivals.get(endpoint) ?? [])[expected - 1] ?? sentAt) - sentAt);
        await sleep(LATENCY_INTERVAL_MS);
      }
    } finally {
      clearInterval(poller);
    }
    const latency = { members: LATENCY_MEMBERS, messages: LATENCY_MESSAGES, count: latencies.length, ...latencySummary(latencies) };
    log(`  message → push p50 ${latency.p50} ms, p99 ${latency.p99} ms`);
    return { encrypt, rosters, sender, latency };
  } finally {
    await pushService.close();
  }
}

async function waitForRoster(read: () => Promise<readonly unknown[]>, size: number) {
  const deadline = Date.now() + 30_000;
  while ((await read()).length < size) {
    if (Date.now() > deadline) throw new Error(`push bench: the room's push roster did not reach ${size} entries in time`);
    await sleep(50);
  }
}

async function waitUntil(condition: () => boolean, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('push bench: pushes did not all arrive in time');
    await sleep(5);
  }
}

type Push = Awaited<ReturnType<typeof measure>>;

/** Waits until the handlers' DynamoDB and SQS clients have sent nothing for 750 ms (at most 15 s, then says so). */
async function quietClients(clients: Parameters<typeof recording>[0], log: (line: string) => void): Promise<void> {
  const quiet = await recording(
    clients,
    async (recorder) => {
      const deadline = performance.now() + 15_000;
      let seen = -1;
      let since = performance.now();
      while (performance.now() < deadline) {
        const now = recorder.dynamo.length + recorder.sqs.length;
        if (now !== seen) {
          seen = now;
          since = performance.now();
        } else if (performance.now() - since >= 750) return true;
        await sleep(50);
      }
      return false;
    },
    { capacity: false },
  );
  if (!quiet) log('  push: the handlers were still busy 15 s after the joins; the roster count may include their requests');
}

export const push: Bench<Push> = {
  id: 'push',
  name: 'Push notifications',
  needs: 'service',
  run: measure,

  goals: (result) => [
    {
      id: 'push-encrypt-cpu',
      name: 'Web push encryption + VAPID signing: CPU per push',
      target: `≤ ${GOALS.encryptCpuMs} ms`,
      measured: `${result.encrypt.cpuMsPerPush} ms`,
      pass: result.encrypt.cpuMsPerPush <= GOALS.encryptCpuMs,
    },
    ...ROSTER_SIZES.map((size) => {
      const roster = result.rosters[size];
      return {
        id: `push-recipients-${size}`,
        name: `DynamoDB requests to find a message's push recipients, ${size.toLocaleString('en-US')} subscribed members`,
        target: `≤ ${GOALS.recipientRequests}`,
        measured: String(roster?.requests ?? 'n/a'),
        pass: roster ? roster.requests <= GOALS.recipientRequests : null,
      };
    }),
  ],

  section(result) {
    const rosterRows = ROSTER_SIZES.map((size) => {
      const roster = result.rosters[size];
      return `| Recipients of a room of ${size.toLocaleString('en-US')} subscribed members | ${roster?.requests} request(s) (${Object.entries(
        roster?.byCommand ?? {},
      )
        .map(([command, count]) => `${command} ${count}`)
        .join(', ')}), ${roster?.readUnits} RU |`;
    }).join('\n');
    const byCommand = Object.entries(result.sender.dynamoByCommand)
      .map(([command, count]) => `${command} ${count}`)
      .join(', ');
    const { latency } = result;
    return `## Push notifications

Pushes go to a local push service (\`test/support/push/web-push-service.ts\`) that answers 201 at once, so these are the service's own costs. Members subscribe through \`POST /push/web/subscribe\` and join through the rooms API, which fills the rooms' push rosters (docs/data-model.md, "Push").

| Figure | Value |
| --- | --- |
| Encryption (aes128gcm) + VAPID signing, CPU per push (${ENCRYPTIONS} pushes of a ${result.encrypt.payloadBytes}-byte payload) | ${result.encrypt.cpuMsPerPush} ms (wall ${result.encrypt.wallMsPerPush} ms) |
| Web pushes per second from one sender invocation (batches of ${SENDER_BATCH_SIZE}, 8 in flight) | ${result.sender.pushesPerSecond} |
| DynamoDB requests per push sent (outcome on the subscription, push record) | ${result.sender.dynamoRequestsPerPush} (${byCommand}) |
${rosterRows}
| Message → push receipt, room of ${latency.members} subscribed members (${latency.messages} messages, ${latency.count} receipts), p50 / p99 / max | ${latency.p50} / ${latency.p99} / ${latency.max} ms |

The latency path is the whole one: the message's write, the table stream, the event publisher, the push subscriber's queue, the dispatcher's roster Query, and, since 100 recipients exceed \`PUSH_INLINE_RECIPIENTS\` (50), two queued batches sent by the push queue's consumers in parallel.`;
  },
};
