/**
 * Does moto hand one message to two receives that race? `npx tsx bench/experiments/sqs-duplicates.ts`
 * sends 20 messages 30 times to a queue polled by 1, 5 and 20 concurrent long polls, and
 * counts messages delivered more than once (the visibility timeout is far longer than the test).
 */
import {
  CreateQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { startMoto } from '#lib/local/emulator.ts';

process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
process.env.AWS_REGION ??= 'us-east-1';
const TRIALS = 30;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const moto = await startMoto();
try {
  const sqs = new SQSClient({ endpoint: moto.endpoint });
  for (const receivers of [1, 5, 20]) {
    const { QueueUrl } = await sqs.send(
      new CreateQueueCommand({
        QueueName: `probe-${receivers}`,
        Attributes: { VisibilityTimeout: '300' },
      }),
    );
    let messages = 0;
    let duplicates = 0;
    for (let trial = 0; trial < TRIALS; trial++) {
      const seen = new Map<string, number>();
      let polling = true;
      const loops = Array.from({ length: receivers }, async () => {
        while (polling) {
          const { Messages = [] } = await sqs.send(
            new ReceiveMessageCommand({ QueueUrl, MaxNumberOfMessages: 5, WaitTimeSeconds: 1 }),
          );
          for (const message of Messages) {
            seen.set(message.Body ?? '', (seen.get(message.Body ?? '') ?? 0) + 1);
          }
        }
      });
      await sleep(200);
      for (let batch = 0; batch < 2; batch++) {
        await sqs.send(
          new SendMessageBatchCommand({
            QueueUrl,
            Entries: Array.from({ length: 10 }, (_, index) => ({
              Id: String(index),
              MessageBody: `${trial}-${batch}-${index}`,
            })),
          }),
        );
      }
      await sleep(1500);
      polling = false;
      await Promise.all(loops);
      messages += seen.size;
      for (const count of seen.values()) duplicates += count - 1;
    }
    console.log(`${receivers} receivers: ${messages} messages, ${duplicates} duplicate deliveries`);
  }
} finally {
  await moto.stop();
}
