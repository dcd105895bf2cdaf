import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transcriptOf } from '../support/ai/openai-server';
import { api, createTestProject, newGroupRoom, newUser, type TestProject } from '../support/api';
import { download, multipartBody, pngBytes, sendBytes, wavBytes } from '../support/attachments';
import { eventually, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * `POST /messages/voice` through the shared local runtime, whose AI provider is the local
 * OpenAI-compatible server: the recording is stored like an upload, the message goes through the
 * message pipeline with its link and duration, and the transcript arrives later from the
 * transcription queue's worker as `message.updated` (`transcribed`) at a real webhook receiver and
 * in history. Without AI (no transcript) is `attachments-runtime.test.ts`.
 */

let project: TestProject;
let receiver: WebhookReceiver;

beforeAll(async () => {
  project = await createTestProject('voice');
  receiver = await startWebhookReceiver();
  const registered = await api('/webhooks/register', {
    apiKey: project.apiKey,
    body: { url: receiver.url, eventTypes: ['message.updated'] },
  });
  receiver.secret = registered.body.secret;
});

afterAll(async () => {
  await receiver.close();
});

const updatesOf = (messageId: number) =>
  receiver.requests.map((request) => JSON.parse(request.rawBody)).filter((event) => event.payload.messageId === messageId);

describe('POST /messages/voice', () => {
  it('stores the audio, sends the message with its link and measured duration; the transcript follows as message.updated and in history', async () => {
    // Prepare
    const { owner, roomId } = await newGroupRoom(project);
    const audio = wavBytes(1.5);

    // Act
    const sent = await sendBytes(`/messages/voice?roomId=${roomId}`, audio, { token: owner.token, contentType: 'audio/wav' });
    const messageId = sent.body.message.id as number;
    const [update] = await eventually('the transcript webhook', async () => updatesOf(messageId).length > 0 && updatesOf(messageId));
    const history = await api(`/rooms/${roomId}/messages`, { token: owner.token });
    const { file, bytes } = await download(sent.body.message.attachments[0]);

    // Assess
    expect(sent.status).toBe(201);
    expect(sent.body.message).toMatchObject({
      roomId,
      userId: owner.userId,
      content: '🎤 Voice message',
      voice: { durationMs: 1500, transcript: null, transcriptStatus: 'pending' },
    });
    expect(update).toMatchObject({
      type: 'message.updated',
      payload: { roomId, messageId, change: 'transcribed', userId: 'system', transcript: transcriptOf(audio) },
    });
    expect(history.body.messages.find((message: any) => message.id === messageId)).toMatchObject({
      voice: { durationMs: 1500, transcript: transcriptOf(audio), transcriptStatus: 'done' },
    });
    expect(file.headers.get('content-type')).toBe('audio/wav');
    expect(bytes.equals(audio)).toBe(true);
  });

  it('takes a multipart recording with roomId, caption and clientMessageId as form fields', async () => {
    // Prepare
    const { owner, roomId } = await newGroupRoom(project);
    const form = multipartBody(
      { bytes: wavBytes(0.5), contentType: 'audio/wav', filename: 'memo.wav' },
      { roomId, caption: 'listen', clientMessageId: 'voice-1' },
    );

    // Act
    const sent = await sendBytes('/messages/voice', form.body, { token: owner.token, contentType: form.contentType });

    // Assess
    expect(sent.status).toBe(201);
    expect(sent.body.message).toMatchObject({ content: 'listen', clientMessageId: 'voice-1', voice: { durationMs: 500 } });
    expect(sent.body.message.attachments[0]).toMatch(/\/memo\.wav$/);
  });

  it.each([
    {
      label: 'a non-member',
      status: 403,
      code: 'not_a_member',
      who: 'stranger',
      bytes: () => wavBytes(0.2),
      type: 'audio/wav',
      room: true,
    },
    {
      label: 'an image',
      status: 415,
      code: 'unsupported_media_type',
      who: 'owner',
      bytes: () => pngBytes(),
      type: 'image/png',
      room: true,
    },
    {
      label: 'no roomId',
      status: 400,
      code: 'validation_failed',
      who: 'owner',
      bytes: () => wavBytes(0.2),
      type: 'audio/wav',
      room: false,
    },
    {
      label: 'an empty body',
      status: 400,
      code: 'empty_upload',
      who: 'owner',
      bytes: () => Buffer.alloc(0),
      type: 'audio/wav',
      room: true,
    },
  ])('refuses $label with $status $code, storing nothing', async ({ status, code, who, bytes, type, room }) => {
    // Prepare
    const { owner, roomId } = await newGroupRoom(project);
    const caller = who === 'owner' ? owner : await newUser(project);

    // Act
    const response = await sendBytes(`/messages/voice${room ? `?roomId=${roomId}` : ''}`, bytes(), {
      token: caller.token,
      contentType: type,
    });
    const history = await api(`/rooms/${roomId}/messages`, { token: owner.token });

    // Assess
    expect(response).toMatchObject({ status, body: { error: { code } } });
    expect(history.body.messages).toEqual([]);
  });

  it('answers 403 feature_disabled while the voice_messages flag is off for the project, and works again once it is on', async () => {
    // Prepare
    const own = await createTestProject('voice-flag');
    const { owner, roomId } = await newGroupRoom(own);
    await api('/admin/feature-flags', { apiKey: own.apiKey, method: 'PUT', body: { overrides: { voice_messages: false } } });

    // Act
    const off = await sendBytes(`/messages/voice?roomId=${roomId}`, wavBytes(0.2), { token: owner.token, contentType: 'audio/wav' });
    await api('/admin/feature-flags', { apiKey: own.apiKey, method: 'PUT', body: { overrides: { voice_messages: true } } });
    const on = await sendBytes(`/messages/voice?roomId=${roomId}`, wavBytes(0.2), { token: owner.token, contentType: 'audio/wav' });

    // Assess
    expect(off).toMatchObject({ status: 403, body: { error: { code: 'feature_disabled' } } });
    expect(on.status).toBe(201);
  });
});
