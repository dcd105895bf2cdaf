/**
 * The daily digest: users per second through a whole admin run of 5,000 subscribers (the run's
 * pages, the digest queue, the workers' deliveries in-app, by web push and by e-mail), and the
 * DynamoDB requests per user. Every subscriber is a member of a room with activity and has every
 * channel on; web pushes go to the tests' status push service (201 at once) and e-mails to the
 * local runtime's SES emulator, so the figure is the service's own work. AI is off in the bench's
 * runtime: the digests carry counts and top messages.
 */
import type { Bench, Context } from './harness';
import { recording } from './instrument';
import { countBy, createProject, round, sleep } from './util';

/** `BENCH_DIGEST_USERS` for a quicker run; the figure of docs/performance.md is for 5,000. */
const USERS = Number(process.env.BENCH_DIGEST_USERS) > 0 ? Number(process.env.BENCH_DIGEST_USERS) : 5000;
const GOALS = { usersPerSecond: 300 } as const;

async function measure({ service, log }: Context) {
  const { api, runtime, clients } = service;
  const { startStatusPushService } = await import('../test/support/push/web-push-service.ts');
  const { putAll } = await import('#shared/db/batch');
  const { digestPreferenceItemFor } = await import('#shared/db/digest-preference');
  const { membershipItemFor } = await import('#shared/db/membership');
  const { targetIdFor, webSubscriptionKey } = await import('#shared/db/push');
  const pushService = await startStatusPushService();
  try {
    const project = await createProject(api, 'digest-bench');
    const talker = await project.token('talker');
    await api.expect(201, '/rooms', { token: talker, body: { id: 'all-hands', type: 'group', name: 'All hands' } });
    for (const content of ['Quarterly numbers are in', 'Offsite moved to June', 'Who owns the launch checklist?']) {
      await api.expect(201, '/messages', { token: talker, body: { roomId: 'all-hands', content } });
    }
    const now = new Date().toISOString();
    const items: Record<string, unknown>[] = [];
    for (let index = 0; index < USERS; index++) {
      const userId = `subscriber-${String(index).padStart(4, '0')}`;
      const browser = pushService.subscription(201);
      const subscriptionId = targetIdFor('web', project.projectId, browser.endpoint);
      items.push(
        membershipItemFor(project.projectId, 'all-hands', userId, 'member', now),
        digestPreferenceItemFor(project.projectId, userId, {
          enabled: true,
          email: `${userId}@bench.example.com`,
          inAppEnabled: true,
          webPushEnabled: true,
          emailEnabled: true,
          updatedAt: now,
        }),
        {
          ...webSubscriptionKey(project.projectId, userId, subscriptionId),
          projectId: project.projectId,
          userId,
          subscriptionId,
          endpoint: browser.endpoint,
          p256dh: browser.keys.p256dh,
          auth: browser.keys.auth,
          failure_count: 0,
          createdAt: now,
        },
      );
    }
    const lanes = 8;
    const size = Math.ceil(items.length / lanes);
    await Promise.all(Array.from({ length: lanes }, (_, lane) => putAll(items.slice(lane * size, (lane + 1) * size))));
    log(`  seeded ${USERS} subscribers (membership, preferences, a web push subscription each)`);

    runtime.startConsumers();
    const metric = (name: string) => runtime.stats().metrics[name] ?? 0;
    const before = { inApp: metric('digest_in_app'), webPush: metric('digest_web_push'), email: metric('digest_email') };
    const done = () =>
      metric('digest_in_app') - before.inApp >= USERS &&
      metric('digest_web_push') - before.webPush >= USERS &&
      metric('digest_email') - before.email >= USERS;
    const { seconds, requests } = await recording(
      clients,
      async (recorder) => {
        const started = performance.now();
        await api.expect(202, '/admin/digest/run', {
          apiKey: project.apiKey,
          body: { digestDate: now.slice(0, 10), maxUsers: USERS },
        });
        const deadline = started + 300_000;
        while (!done()) {
          if (performance.now() > deadline) throw new Error('digest bench: the run did not deliver to every user within 5 minutes');
          await sleep(20);
        }
        const msByCommand: Record<string, number[]> = {};
        for (const call of recorder.dynamo) {
          msByCommand[call.command] ??= [];
          msByCommand[call.command]?.push(call.ms);
        }
        log(
          `  mean DynamoDB latency: ${Object.entries(msByCommand)
            .map(([command, values]) => `${command} ${round(values.reduce((a, b) => a + b, 0) / values.length, 1)} ms`)
            .join(', ')}`,
        );
        return { seconds: (performance.now() - started) / 1000, requests: recorder.dynamo.map((call) => call.command) };
      },
      { capacity: false },
    );
    const result = {
      users: USERS,
      seconds: round(seconds, 1),
      usersPerSecond: round(USERS / seconds, 0),
      pushesReceived: pushService.requests.length,
      dynamoRequestsPerUser: round(requests.length / USERS, 2),
      dynamoByCommand: countBy(requests, USERS, 2),
    };
    log(
      `  ${USERS} users in ${result.seconds} s: ${result.usersPerSecond} users/s, ${result.dynamoRequestsPerUser} DynamoDB requests per user`,
    );
    return result;
  } finally {
    await pushService.close();
  }
}

type Digest = Awaited<ReturnType<typeof measure>>;

export const digest: Bench<Digest> = {
  id: 'digest',
  name: 'Daily digest',
  needs: 'service',
  run: measure,

  goals: (result) => [
    {
      id: 'digest-users-per-second',
      name: `Daily digest throughput, ${USERS.toLocaleString('en-US')} users (in-app + web push + e-mail)`,
      target: `≥ ${GOALS.usersPerSecond} users/s`,
      measured: `${result.usersPerSecond} users/s`,
      pass: result.usersPerSecond >= GOALS.usersPerSecond,
    },
  ],

  section(result) {
    const byCommand = Object.entries(result.dynamoByCommand)
      .map(([command, count]) => `${command} ${count}`)
      .join(', ');
    return `## Daily digest

One admin run (\`POST /admin/digest/run\`) of ${result.users.toLocaleString('en-US')} subscribers of one project, seeded with batch writes: each a member of a room with three new messages, with in-app, web push and e-mail on and one web push subscription. The run pages through the project's subscriber index and queues jobs of \`DIGEST_USERS_PER_JOB\` (25) users on the digest queue; the workers (\`DigestWorker\`, 5 batches of 5 jobs at once) deliver each channel once (a conditional put per channel). Web pushes go to the tests' push service, which answers 201 at once, and e-mails to the runtime's SES emulator; AI is off, so the digests carry counts and top messages. Timed from the request to the last user's third channel.

| Figure | Value |
| --- | --- |
| Users delivered per second (all three channels) | ${result.usersPerSecond} (${result.users.toLocaleString('en-US')} users in ${result.seconds} s) |
| DynamoDB requests per user (run pages, preferences, window, rooms, messages, claims, notification, push targets and outcome) | ${result.dynamoRequestsPerUser} (${byCommand}) |
| Web pushes received by the push service | ${result.pushesReceived.toLocaleString('en-US')} |`;
  },
};
