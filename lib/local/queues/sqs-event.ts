import type { Message } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { LOCAL_REGION } from '../sqs-local';

/** A received message as Lambda's SQS event source hands it to the function. */
export function toSqsRecord(message: Message, queueArn: string): SQSEvent['Records'][number] {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: Object.fromEntries(
      Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
        name,
        { stringValue: value.StringValue, dataType: value.DataType ?? 'String', stringListValues: [], binaryListValues: [] },
      ]),
    ),
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: LOCAL_REGION,
  };
}

export const queueArnOf = (queueUrl: string) => `arn:aws:sqs:${LOCAL_REGION}:000000000000:${queueUrl.split('/').pop()}`;
