/**
 * How Lethe meets S3's request limit, in simulation: the benchmark's moto refuses DeleteObjects
 * with 503 SlowDown above R keys a second per prefix partition (bench/moto_server_bulk.py,
 * `/_bench/throttle`). `npx tsx bench/experiments/slowdown.ts [R] [objects] [partitions]
 * [pageSize] [burst]` seeds the objects, deletes them through a local stack whose pages hold
 * `pageSize` keys (default 1,000), and prints the sustained rate against R x partitions and the
 * share of DeleteObjects refused. `burst` is each partition's bucket, at least a page.
 */
import { resolve } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { startEmulators } from '#lib/local/emulator.ts';
import { LocalStack } from '#lib/local/local-stack.ts';
import { apiClient, parseLocation } from '../../test/helpers/http.ts';
import { createSeeder, layout } from '../seeding.ts';
import { stampSendTime } from '../throttling.ts';

process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
process.env.AWS_REGION ??= 'us-east-1';
process.env.POWERTOOLS_LOG_LEVEL ??= 'ERROR';

const [rate = 100, objects = 30_000, partitions = 10, pageSize = 1000, asked = 0] = process.argv
  .slice(2)
  .map(Number);
// A partition's bucket must hold a page, or no page could ever be admitted.
const burst = Math.max(asked, pageSize);
const emulators = await startEmulators(resolve('bench/moto_server_bulk.py'));
const throttle = async (keysPerSecond: number) => {
  const response = await fetch(`${emulators.s3.endpoint}/_bench/throttle`, {
    method: 'POST',
    body: JSON.stringify({ keysPerSecond, burst }),
  });
  return (await response.json()) as {
    admitted: number;
    refused: number;
    keys: number;
    sustainedKeysPerSecond: number;
  };
};
const stack = await LocalStack.start({
  endpoint: emulators.main.endpoint,
  s3Endpoint: emulators.s3.endpoint,
  port: 0,
  namePrefix: 'slowdown',
  ...(process.env.SLOWDOWN_PROCESSING_TIME ? {} : { wrapClients: stampSendTime }),
  sweepIntervalSeconds: 2,
  visibilityTimeoutSeconds: 10,
  settings: { LETHE_PAGE_SIZE: String(pageSize) },
});
try {
  const api = apiClient(stack.url);
  const created = await api.create('slow', 'logs');
  const { bucket, prefix } = parseLocation(String(created.body.location));
  const s3 = new S3Client({ forcePathStyle: true });
  await createSeeder('bulk', emulators.s3.endpoint, s3).seed(
    bucket,
    layout(prefix, objects, partitions),
  );
  await throttle(rate);
  const started = performance.now();
  const reply = await api.delete('slow', 'logs');
  for (;;) {
    const { body } = await api.deletion('slow', String(reply.body.deletionId));
    if (body.state === 'COMPLETED' || body.state === 'FAILED') break;
    if (process.env.SLOWDOWN_TRACE && Math.round(performance.now() - started) % 5000 < 200) {
      console.error(
        JSON.stringify({ at: Math.round((performance.now() - started) / 1000), ...body }),
      );
    }
    await new Promise((done) => setTimeout(done, 200));
  }
  const seconds = (performance.now() - started) / 1000;
  const counts = await throttle(0);
  const limit = rate * partitions;
  console.log(
    JSON.stringify({
      rate,
      pageSize,
      partitions,
      objects,
      seconds: Number(seconds.toFixed(1)),
      keysPerSecond: Math.round(counts.sustainedKeysPerSecond),
      ofLimit: Number((counts.sustainedKeysPerSecond / limit).toFixed(2)),
      deleteObjectsAdmitted: counts.admitted,
      deleteObjectsRefused: counts.refused,
      slowDownShare: Number((counts.refused / (counts.admitted + counts.refused)).toFixed(3)),
    }),
  );
} finally {
  await stack.stop();
  await emulators.stop();
}
