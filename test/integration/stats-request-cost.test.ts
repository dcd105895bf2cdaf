import { beforeAll, describe, expect, it } from 'vitest';
import { addMetricSink, type MetricRecord } from '#shared/metrics';
import { handler as createMessage } from '../../functions/http/messages/create-message';
import { api, createTestProject, type TestProject, uniqueId } from '../support/api';
import { dynamoRequestsOf } from '../support/dynamo-requests';
import { invokeRoute } from '../support/in-process-route';

/**
 * The counters cost the request path no DynamoDB request: the real `CreateMessage` handler module,
 * called in this process as the HTTP API calls it, with its own DynamoDB client recorded. Each
 * message leaves its figure in the invocation's EMF record (captured here by a metric sink, as the
 * local feed captures it), and none of its requests names a stats or alert item. Its requests are
 * the message's own: the same 3 as "Message cost" in docs/performance.md counts without figures.
 */

let project: TestProject;
let token: string;
let roomId: string;
const records: MetricRecord[] = [];

beforeAll(async () => {
  project = await createTestProject('stats-cost');
  token = await project.token(uniqueId('alice'));
  roomId = uniqueId('room');
  expect((await api('/rooms', { token, body: { id: roomId, type: 'group', members: [] } })).status).toBe(201);
  addMetricSink((_name, _value, record) => {
    if (!records.includes(record)) records.push(record);
  });
});

async function send(content: string) {
  return invokeRoute(createMessage, 'CreateMessage', { headers: { authorization: `Bearer ${token}` }, body: { roomId, content } });
}

describe('a message with the figures on', () => {
  it('costs the DynamoDB requests of the message alone: none names a stats item, and its figure leaves in the EMF record', async () => {
    // Prepare: warm caches (project, membership, block list), as a steady-state message finds them
    for (let index = 0; index < 3; index++) expect((await send(`warm ${index}`)).status).toBe(201);
    records.length = 0;

    // Act
    const sent = await dynamoRequestsOf(async () => {
      for (let index = 0; index < 5; index++) expect((await send(`counted ${index}`)).status).toBe(201);
    });

    // Assess
    expect(sent.filter((request) => /#(STATS|ALERTS)$/.test(request.pk ?? ''))).toEqual([]);
    expect(sent.length / 5).toBe(3);
    const figures = records.filter((record) => record.figures === 'v1' && record.projectId === project.projectId);
    expect(figures).toHaveLength(5);
    for (const figure of figures) expect(figure).toMatchObject({ requests_total: 1 });
  });
});
