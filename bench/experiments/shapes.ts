/**
 * Where does a deletion's time go when the shape, not the size, is large? Starts moto (with the
 * benchmark's bulk seeding), a local stack, and times: one stream of OBJECTS objects in WIDE
 * partitions, MANY streams of EACH objects deleted at once, and a plan beside a deletion.
 * `npx tsx bench/experiments/shapes.ts [narrow|wide|many|plan|tenant] ...` prints a line per
 * measurement and the requests each service answered.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { startEmulators, startMoto } from '#lib/local/emulator.ts';
import { LocalStack } from '#lib/local/local-stack.ts';
import { documentClient } from '#lib/store/index.ts';
import { apiClient, parseLocation } from '../../test/helpers/http.ts';
import { emulatorProfiler, listedDeletions } from '../context.ts';
import { RequestCounter } from '../counting.ts';
import { floorDelete } from '../deleters.ts';
import { cpuSecondsOf } from '../memory.ts';
import { createBucket, createSeeder } from '../seeding.ts';

process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
process.env.AWS_REGION ??= 'us-east-1';
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';

const which = new Set(
  process.argv.slice(2).length ? process.argv.slice(2) : ['narrow', 'wide', 'many'],
);
const n = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

const day = (index: number) =>
  new Date(Date.UTC(2025, 0, 1) + index * 86_400_000).toISOString().slice(0, 10);
const objectsIn = (prefix: string, count: number, partitions: number) =>
  Array.from({ length: count }, (_, index) => ({
    key: `${prefix}dt=${day(index % partitions)}/part-${String(index).padStart(6, '0')}.json`,
    body: `{"n":${index}}`,
  }));

// S3 apart from the other services, as `npm start` runs them; SHAPES_ONE_MOTO=1: one process.
const launcher = resolve(process.env.SHAPES_MOTO ?? 'bench/moto_server_bulk.py');
const emulators = process.env.SHAPES_ONE_MOTO
  ? await startMoto(launcher).then((one) => ({ main: one, s3: one, stop: () => one.stop() }))
  : await startEmulators(launcher);
process.env.AWS_ENDPOINT_URL = emulators.main.endpoint;
process.env.AWS_ENDPOINT_URL_S3 = emulators.s3.endpoint;
const s3 = new S3Client({ forcePathStyle: true });
const seeder = createSeeder('bulk', emulators.s3.endpoint, s3);
const counter = new RequestCounter();
const stack = await LocalStack.start({
  endpoint: emulators.main.endpoint,
  s3Endpoint: emulators.s3.endpoint,
  port: 0,
  namePrefix: 'shapes',
  // An offboarding completes at the sweep after its last deletion: sweep often.
  sweepIntervalSeconds: 2,
  wrapClients: (clients) => counter.attach(clients),
});
const api = apiClient(stack.url);
// SHAPES_TRACE=1: a line per call the stack makes, as it ends: its start and its duration (s).
if (process.env.SHAPES_TRACE) {
  const t0 = performance.now();
  counter.observe(({ service, command, input, ms }) => {
    const i = input as Record<string, unknown>;
    const brief = JSON.stringify(
      i.Key ?? i.TransactItems ?? i.KeyConditionExpression ?? i.Prefix ?? '',
    )
      .replace(/"(S|N)":/g, '')
      .slice(0, 150);
    const what = String(i.UpdateExpression ?? i.ConditionExpression ?? '').slice(0, 60);
    console.log(
      `${((performance.now() - ms - t0) / 1000).toFixed(3)} +${(ms / 1000).toFixed(3)} ${service} ${command} ${brief} ${what}`,
    );
  });
}
const requests = () => {
  const snapshot = counter.snapshot();
  const line = Object.entries(snapshot).map(([service, commands]) => {
    const calls = Object.entries(commands)
      .filter(([command]) => command !== 'ReceiveMessage')
      .map(
        ([command, tally]) =>
          `${command} ${tally.calls} (${(tally.ms.reduce((a, b) => a + b, 0) / tally.calls).toFixed(0)} ms)`,
      )
      .join(', ');
    return `${service}: ${calls}`;
  });
  counter.reset();
  return line.join('\n  ');
};
const profile = async () => {
  const byOperation = await emulatorProfiler([
    ...new Set([emulators.main.endpoint, emulators.s3.endpoint]),
  ])();
  return Object.entries(byOperation)
    .sort(([, a], [, b]) => b.cpuSeconds - a.cpuSeconds)
    .slice(0, 8)
    .map(([operation, { count, cpuSeconds }]) => `${operation} ${count} ${cpuSeconds.toFixed(1)} s`)
    .join(', ');
};

// SHAPES_PROFILE=<file>: a CPU profile of this process (the local stack) over each measured run.
const inspector = process.env.SHAPES_PROFILE ? new Session() : undefined;
inspector?.connect();
const post = (method: string, params?: object) =>
  new Promise<unknown>((done, fail) =>
    inspector?.post(method, params, (error, result) => (error ? fail(error) : done(result))),
  );
async function profiling<T>(name: string, run: () => Promise<T>): Promise<T> {
  if (!inspector) return run();
  await post('Profiler.enable');
  await post('Profiler.start');
  try {
    return await run();
  } finally {
    const { profile } = (await post('Profiler.stop')) as { profile: object };
    writeFileSync(`${process.env.SHAPES_PROFILE}.${name}.cpuprofile`, JSON.stringify(profile));
  }
}

/** CPU seconds of this process and of each emulator process, since `before` when given. */
function cpuOf(): number[];
function cpuOf(before: number[]): string;
function cpuOf(before?: number[]): number[] | string {
  const now = [
    process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
    cpuSecondsOf(emulators.main.pid) ?? 0,
    cpuSecondsOf(emulators.s3.pid) ?? 0,
  ];
  if (!before) return now;
  const [local, main, s3] = now.map((value, index) => value - (before[index] ?? 0));
  return `this process ${local?.toFixed(1)} s, moto ${main?.toFixed(1)} s, moto for S3 ${s3?.toFixed(1)} s`;
}

async function stream(tenant: string, name: string, count: number, partitions: number) {
  const created = await api.create(tenant, name);
  if (created.status !== 201) throw new Error(`create ${name}: ${created.status}`);
  const { bucket, prefix } = parseLocation(String(created.body.location));
  if (count > 0) await seeder.seed(bucket, objectsIn(prefix, count, partitions));
}

// Watching is the experiment's own business: one query of a tenant's list index a poll (a
// reader per deletion would load the emulator with as many reads as there are deletions).
const table = documentClient(new DynamoDBClient({ endpoint: emulators.main.endpoint }));
async function completed(tenant: string, ids: string[], what = 'deletions') {
  const left = new Set(ids);
  const begun = performance.now();
  // When the watcher first saw each deletion in each state: where a shape's time goes.
  const seen = new Map<string, number[]>();
  const report = () => {
    if (ids.length < 2) return;
    const line = [...seen]
      .map(([state, times]) => {
        const sorted = times.sort((x, y) => x - y);
        const at = (q: number) => (sorted[Math.floor(q * (sorted.length - 1))] ?? 0) / 1000;
        return `${state} ${sorted.length}: first ${at(0).toFixed(1)} s, median ${at(0.5).toFixed(1)} s, last ${at(1).toFixed(1)} s`;
      })
      .join('; ');
    console.log(`  seen: ${line}`);
  };
  const states = new Map<string, string>();
  while (left.size > 0) {
    await new Promise((done) => setTimeout(done, 100));
    if (what === 'plans') {
      for (const id of left) {
        const { body } = await api.call('GET', `/v1/tenants/${tenant}/plans/${id}`);
        if (body.state === 'COMPLETED') left.delete(id);
        else if (body.state === 'FAILED') throw new Error(`${id} FAILED`);
      }
      continue;
    }
    for await (const item of listedDeletions(table, stack.resources.tableName, tenant)) {
      if (states.get(item.deletionId) !== item.state) {
        states.set(item.deletionId, item.state);
        seen.set(item.state, [...(seen.get(item.state) ?? []), performance.now() - begun]);
      }
      if (item.state === 'COMPLETED') left.delete(item.deletionId);
      else if (item.state === 'FAILED') throw new Error(`${item.deletionId} FAILED`);
    }
  }
  report();
}

try {
  // The floor on a copy in a bucket of its own: the S3 emulator alone, one request at a time.
  if (which.has('floor')) {
    const objects = n('OBJECTS', 1200);
    const partitions = n('NARROW', 4);
    await createBucket(s3, 'shapes-floor');
    await seeder.seed('shapes-floor', objectsIn('floor/', objects, partitions));
    const cpu = cpuOf();
    const result = await floorDelete(s3, 'shapes-floor', 'floor/');
    console.log(
      `floor: ${objects} objects in ${partitions} partitions: ${(result.ms / 1000).toFixed(1)} s (${result.lists} lists, ${(result.listMs / result.lists).toFixed(0)} ms; ${result.deletes} deletes, ${(result.deleteMs / Math.max(1, result.deletes)).toFixed(0)} ms)`,
    );
    console.log(`  CPU: ${cpuOf(cpu)}`);
  }
  // One stream of the same objects in few partitions and in many: the time should not differ.
  for (const [shape, variable, fallback] of [
    ['narrow', 'NARROW', 4],
    ['wide', 'WIDE', 150],
  ] as const) {
    if (!which.has(shape)) continue;
    const objects = n('OBJECTS', 1200);
    const partitions = n(variable, fallback);
    await stream('shapes', shape, objects, partitions);
    counter.reset();
    await profile();
    const cpu = cpuOf();
    const started = performance.now();
    await profiling(shape, async () => {
      const reply = await api.delete('shapes', shape);
      await completed('shapes', [String(reply.body.deletionId)]);
    });
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `${shape}: ${objects} objects in ${partitions} partitions: ${seconds.toFixed(1)} s`,
    );
    console.log(`  CPU: ${cpuOf(cpu)}`);
    console.log(`  ${requests()}`);
    console.log(`  emulator CPU: ${await profile()}`);
  }
  if (which.has('many')) {
    const streams = n('MANY', 40);
    const each = n('EACH', 30);
    for (let index = 0; index < streams; index++) await stream('many', `s${index}`, each, 3);
    counter.reset();
    await profile();
    const cpu = cpuOf();
    const started = performance.now();
    await profiling('many', async () => {
      const replies = await Promise.all(
        Array.from({ length: streams }, (_, index) => api.delete('many', `s${index}`)),
      );
      await completed(
        'many',
        replies.map((reply) => String(reply.body.deletionId)),
      );
    });
    const seconds = (performance.now() - started) / 1000;
    console.log(`many: ${streams} streams of ${each} objects at once: ${seconds.toFixed(1)} s`);
    console.log(`  CPU: ${cpuOf(cpu)}`);
    console.log(`  ${requests()}`);
    console.log(`  emulator CPU: ${await profile()}`);
  }
  if (which.has('plan')) {
    const objects = n('OBJECTS', 5000);
    await stream('plans', 'logs', objects, 10);
    counter.reset();
    await profile();
    let started = performance.now();
    const plan = await api.call('POST', '/v1/tenants/plans/streams/logs/plans');
    await completed('plans', [String(plan.body.planId)], 'plans');
    const planSeconds = (performance.now() - started) / 1000;
    console.log(`plan: ${objects} objects in 10 partitions: ${planSeconds.toFixed(1)} s`);
    console.log(`  ${requests()}`);
    console.log(`  emulator CPU: ${await profile()}`);
    started = performance.now();
    const reply = await api.delete('plans', 'logs');
    await completed('plans', [String(reply.body.deletionId)]);
    const deleteSeconds = (performance.now() - started) / 1000;
    console.log(`deletion of the same: ${deleteSeconds.toFixed(1)} s`);
    console.log(`  ${requests()}`);
    console.log(`  emulator CPU: ${await profile()}`);
  }
  if (which.has('tenant')) {
    const streams = n('STREAMS', 500);
    const each = n('EACH', 2);
    let started = performance.now();
    for (let index = 0; index < streams; index++) await stream('tenant', `s${index}`, each, 1);
    console.log(
      `created ${streams} streams in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    counter.reset();
    await profile();
    started = performance.now();
    await api.call('DELETE', '/v1/tenants/tenant');
    let deleted: number | undefined;
    for (;;) {
      const { body } = await api.call('GET', '/v1/tenants/tenant/offboarding');
      const states = (body.deletionStates ?? {}) as Record<string, number>;
      if (deleted === undefined && body.streams === streams && states.COMPLETED === streams) {
        deleted = (performance.now() - started) / 1000;
      }
      if (body.state === 'COMPLETED') break;
      if (body.state === 'FAILED') throw new Error('offboarding FAILED');
      await new Promise((done) => setTimeout(done, 500));
    }
    console.log(`  every stream's deletion COMPLETED after ${deleted?.toFixed(1)} s`);
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `tenant offboarding: ${streams} streams of ${each} objects: ${seconds.toFixed(1)} s`,
    );
    console.log(`  ${requests()}`);
    console.log(`  emulator CPU: ${await profile()}`);
  }
} finally {
  await stack.stop();
  await emulators.stop();
}
