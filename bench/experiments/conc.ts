import { resolve } from 'node:path';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { startMoto } from '#lib/local/emulator.ts';
import { cpuSecondsOf } from '../memory.ts';
import { createBucket, createSeeder } from '../seeding.ts';

process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
process.env.AWS_REGION ??= 'us-east-1';
const moto = await startMoto(resolve('bench/moto_server_bulk.py'));
const s3 = new S3Client({ forcePathStyle: true, endpoint: moto.endpoint });
const seeder = createSeeder('bulk', moto.endpoint, s3);
await createBucket(s3, 'conc');
const keys = Array.from({ length: 20000 }, (_, i) => ({
  key: `p/dt=${i % 10}/part-${String(i).padStart(6, '0')}.json`,
  body: '{}',
}));
await seeder.seed('conc', keys);
const list = (d: number) =>
  s3.send(new ListObjectsV2Command({ Bucket: 'conc', Prefix: `p/dt=${d}/`, MaxKeys: 1000 }));
for (let round = 0; round < 3; round++) {
  let cpu = cpuSecondsOf(moto.pid) ?? 0;
  let t = performance.now();
  for (let d = 0; d < 10; d++) await list(d);
  console.log(
    `sequential: ${((performance.now() - t) / 10).toFixed(0)} ms each, moto CPU ${((((cpuSecondsOf(moto.pid) ?? 0) - cpu) * 1000) / 10).toFixed(0)} ms each`,
  );
  cpu = cpuSecondsOf(moto.pid) ?? 0;
  t = performance.now();
  await Promise.all(Array.from({ length: 10 }, (_, d) => list(d)));
  console.log(
    `concurrent: ${((performance.now() - t) / 10).toFixed(0)} ms each, moto CPU ${((((cpuSecondsOf(moto.pid) ?? 0) - cpu) * 1000) / 10).toFixed(0)} ms each`,
  );
}
await moto.stop();
