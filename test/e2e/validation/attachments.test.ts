import { beforeAll, describe, expect, it } from 'vitest';
import { uniqueId } from '../../support/api';
import { pngBytes, sendBytes, upload, wavBytes } from '../../support/attachments';
import {
  createValidationProject,
  describeValidationMatrix,
  type RouteRequests,
  type ValidationProject,
} from '../../support/matrices/validation-driver';

/**
 * Bad input to the Attachments area's routes. Their bodies are files, not JSON (the bytes' own
 * checks, size, type and sniffing, are `attachments.test.ts`); here: the query parameters of the
 * upload and the voice message, the voice message's room, and the link's path segments (the
 * matrix's path checks). The checks common to every route are the matrix's (`validation-driver.ts`).
 */

let setup: ValidationProject;
let link: string;

beforeAll(async () => {
  setup = await createValidationProject('validation-attachments');
  link = new URL((await upload(setup.memberToken, pngBytes(), 'image/png')).body.url).pathname;
});

const requests: RouteRequests = {
  UploadAttachment: {
    path: () => '/upload?filename=photo.png',
    auth: () => ({ token: setup.memberToken }),
    raw: () => ({ bytes: pngBytes(), contentType: 'image/png' }),
    success: 201,
  },
  // The redirect is followed: the file itself answers.
  GetAttachment: { path: () => link, auth: () => ({}), success: 200 },
  SendVoiceMessage: {
    path: () => `/messages/voice?roomId=${setup.roomId}`,
    auth: () => ({ token: setup.memberToken }),
    raw: () => ({ bytes: wavBytes(0.1), contentType: 'audio/wav' }),
    success: 201,
  },
};

const field = (response: { status: number; body: any }) => ({
  status: response.status,
  code: response.body?.error?.code,
  fields: (response.body?.error?.details ?? []).map((detail: any) => detail.field),
});

describe('POST /upload query parameters', () => {
  it.each([
    { query: 'filename=', field: 'query.filename' },
    { query: `filename=${'a'.repeat(256)}`, field: 'query.filename' },
    { query: 'other=1', field: 'query' },
  ])('?$query → 400 naming $field', async ({ query, field: name }) => {
    // Act
    const response = await sendBytes(`/upload?${query}`, pngBytes(), { token: setup.memberToken, contentType: 'image/png' });

    // Assess
    expect(field(response)).toEqual({ status: 400, code: 'validation_failed', fields: [name] });
  });
});

describe('POST /messages/voice fields', () => {
  it.each([
    { query: () => '', field: 'query.roomId' },
    { query: () => 'roomId=a%20b', field: 'query.roomId' },
    { query: () => `roomId=${setup.roomId}&durationMs=abc`, field: 'query.durationMs' },
    { query: () => `roomId=${setup.roomId}&durationMs=0`, field: 'query.durationMs' },
    { query: () => `roomId=${setup.roomId}&durationMs=600001`, field: 'query.durationMs' },
    { query: () => `roomId=${setup.roomId}&caption=`, field: 'query.caption' },
    { query: () => `roomId=${setup.roomId}&clientMessageId=${'c'.repeat(129)}`, field: 'query.clientMessageId' },
    { query: () => `roomId=${setup.roomId}&bogus=1`, field: 'query' },
  ])('?$field bad → 400 naming it', async ({ query, field: name }) => {
    // Act
    const response = await sendBytes(`/messages/voice?${query()}`, wavBytes(0.1), { token: setup.memberToken, contentType: 'audio/wav' });

    // Assess
    expect(field(response)).toEqual({ status: 400, code: 'validation_failed', fields: [name] });
  });

  it('an unknown room → 404 room_not_found', async () => {
    // Act
    const response = await sendBytes(`/messages/voice?roomId=${uniqueId('missing')}`, wavBytes(0.1), {
      token: setup.memberToken,
      contentType: 'audio/wav',
    });

    // Assess
    expect(response).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
  });
});

describeValidationMatrix('Attachments', requests, {});
