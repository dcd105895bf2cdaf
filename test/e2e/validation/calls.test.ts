import { beforeAll, describe, it } from 'vitest';
import { api } from '../../support/api';
import {
  createValidationProject,
  describeValidationMatrix,
  drop,
  expectInvalid,
  idVariants,
  type RouteRequests,
  set,
  type ValidationProject,
  type Variant,
} from '../../support/matrices/validation-driver';

/** Bad input to the call token and voice AI routes; the checks common to every route are the matrix's (`validation-driver.ts`). */

let fixture: ValidationProject;

beforeAll(async () => {
  fixture = await createValidationProject('validation-calls');
});

const requests: RouteRequests = {
  CreateCallToken: {
    path: () => '/admin/calls/token',
    auth: () => ({ token: fixture.memberToken }),
    body: () => ({ roomId: fixture.roomId }),
    success: 200,
    roomInBody: true,
  },
  RecordVoiceAiMetrics: {
    path: () => '/admin/voice-ai/metrics',
    auth: () => ({ token: fixture.adminToken }),
    body: () => ({ kind: 'realtime', latencyMs: 180 }),
    success: 200,
  },
  GetVoiceAiStats: { path: () => '/admin/voice-ai/stats?window=30m', auth: () => ({ token: fixture.adminToken }), success: 200 },
};

const fieldVariants: Record<string, Variant[]> = {
  CreateCallToken: idVariants('roomId', true),
  RecordVoiceAiMetrics: [
    ['kind missing', drop('kind'), 'body.kind'],
    ['latencyMs missing', drop('latencyMs'), 'body.latencyMs'],
    ['kind unknown', set('kind', 'telepathy'), 'body.kind'],
    ['kind a number', set('kind', 1), 'body.kind'],
    ['latencyMs negative', set('latencyMs', -1), 'body.latencyMs'],
    ['latencyMs over two minutes', set('latencyMs', 120_001), 'body.latencyMs'],
    ['latencyMs a string', set('latencyMs', '180'), 'body.latencyMs'],
    ['samples empty', () => ({ samples: [] }), 'body.samples'],
    ['samples over 100', () => ({ samples: Array(101).fill({ kind: 'realtime', latencyMs: 1 }) }), 'body.samples'],
    ['a sample of an unknown kind', () => ({ samples: [{ kind: 'x', latencyMs: 1 }] }), 'body.samples.0.kind'],
    ['a sample with an extra field', () => ({ samples: [{ kind: 'realtime', latencyMs: 1, at: 'now' }] }), 'body.samples.0'],
    ['a sample and samples together', (body) => ({ ...body, samples: [{ kind: 'realtime', latencyMs: 1 }] }), 'body.samples'],
  ],
};

describeValidationMatrix('Calls', requests, fieldVariants);

describe('GET /admin/voice-ai/stats query', () => {
  it.each(['0m', '25h', '1441m', '1d', 'an hour', '1.5h'])('window=%s → 400 naming query.window', async (window) => {
    // Act
    const response = await api(`/admin/voice-ai/stats?window=${encodeURIComponent(window)}`, { token: fixture.adminToken });

    // Assess
    expectInvalid(response, 'query.window');
  });

  it('refuses an unknown parameter', async () => {
    // Act
    const response = await api('/admin/voice-ai/stats?minutes=5', { token: fixture.adminToken });

    // Assess
    expectInvalid(response, 'query');
  });
});
