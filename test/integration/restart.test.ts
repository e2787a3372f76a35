import { randomUUID } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { apiClient, parseLocation, waitFor } from '../helpers/http.ts';
import { killProcess, type RuntimeProcess, startRuntimeProcess } from '../helpers/process.ts';
import { listAll, partitionedObjects, seedObjects } from '../helpers/s3.ts';

/**
 * Invariant 6 at the process level: kill -9 the local runtime in the middle of a deletion,
 * start it again over the same emulator, and the deletion completes on its own.
 */
describe('restarting the local runtime mid-deletion', () => {
  const running: RuntimeProcess[] = [];
  afterEach(async () => {
    for (const runtime of running.splice(0)) await killProcess(runtime, 'SIGTERM');
  });

  it('resumes the deletion after kill -9 and completes it exactly', async () => {
    // Prepare: one slow runtime (one worker, pages of 20 keys) over the suite's emulator.
    const endpoint = inject('awsEndpoint');
    const env = {
      AWS_ENDPOINT_URL: endpoint,
      LETHE_LOCAL_PREFIX: `r${randomUUID().slice(0, 8)}`,
      LETHE_PAGE_SIZE: '20',
      LETHE_LOCAL_WORKER_CONCURRENCY: '1',
      LETHE_LOCAL_VISIBILITY_TIMEOUT_SECONDS: '4',
      LETHE_SWEEP_INTERVAL_SECONDS: '1',
      LETHE_STALE_AFTER_SECONDS: '3',
    };
    const first = await startRuntimeProcess(env);
    running.push(first);
    const api = apiClient(first.url);
    const s3 = new S3Client({ forcePathStyle: true }); // S3 where the suite put it (AWS_ENDPOINT_URL_S3)
    const stream = await api.create('acme', 'logs');
    const sibling = await api.create('acme', 'logs2');
    const where = parseLocation(String(stream.body.location));
    const siblingWhere = parseLocation(String(sibling.body.location));
    await seedObjects(s3, where.bucket, partitionedObjects(where.prefix, 1_200, 4));
    await seedObjects(s3, siblingWhere.bucket, partitionedObjects(siblingWhere.prefix, 100, 2));
    const before = await listAll(s3, where.bucket, where.prefix);
    const siblingBefore = await listAll(s3, siblingWhere.bucket, siblingWhere.prefix);

    // Act: delete, kill -9 once the deletion is under way, start a new runtime.
    const accepted = await api.delete('acme', 'logs');
    const deletionId = String(accepted.body.deletionId);
    const midway = await waitFor(
      'the deletion to be under way',
      async () => {
        const { body } = await api.deletion('acme', deletionId);
        return Number(body.objectsDeleted) >= 100 ? body : undefined;
      },
      60_000,
      50,
    );
    await killProcess(first, 'SIGKILL');
    const left = await listAll(s3, where.bucket, where.prefix);
    const second = await startRuntimeProcess(env);
    running.push(second);
    const receipt = await waitFor(
      'the deletion to complete after the restart',
      async () => {
        const { body } = await apiClient(second.url).deletion('acme', deletionId);
        return body.state === 'COMPLETED' || body.state === 'FAILED' ? body : undefined;
      },
      180_000,
      500,
    );

    // Assess: it really was interrupted, and it finished exactly, touching nothing else.
    expect(midway.state).toBe('RUNNING');
    expect(left.size).toBeGreaterThan(0);
    expect(receipt).toMatchObject({
      state: 'COMPLETED',
      objectsDeleted: before.size,
      bytesDeleted: [...before.values()].reduce((sum, size) => sum + size, 0),
    });
    expect((await listAll(s3, where.bucket, where.prefix)).size).toBe(0);
    expect(await listAll(s3, siblingWhere.bucket, siblingWhere.prefix)).toEqual(siblingBefore);
  });

  it('starts a SCHEDULED deletion on time after kill -9 during its window, and completes it exactly', async () => {
    // Prepare
    const endpoint = inject('awsEndpoint');
    const env = {
      AWS_ENDPOINT_URL: endpoint,
      LETHE_LOCAL_PREFIX: `s${randomUUID().slice(0, 8)}`,
      LETHE_SWEEP_INTERVAL_SECONDS: '1',
      LETHE_STALE_AFTER_SECONDS: '3',
    };
    const first = await startRuntimeProcess(env);
    running.push(first);
    const api = apiClient(first.url);
    const s3 = new S3Client({ forcePathStyle: true }); // S3 where the suite put it (AWS_ENDPOINT_URL_S3)
    const where = parseLocation(String((await api.create('acme', 'logs')).body.location));
    await seedObjects(s3, where.bucket, partitionedObjects(where.prefix, 60, 3));
    const before = await listAll(s3, where.bucket, where.prefix);

    // Act: a window of 6 s; the runtime dies within it and a new one starts after it.
    const accepted = await api.delete('acme', 'logs', '?graceSeconds=6');
    const deletionId = String(accepted.body.deletionId);
    const executeAfter = Date.parse(String(accepted.body.executeAfter));
    await killProcess(first, 'SIGKILL');
    const untouched = await listAll(s3, where.bucket, where.prefix);
    const second = await startRuntimeProcess(env);
    running.push(second);
    const started = await waitFor(
      'the deletion to start',
      async () => {
        const { body } = await apiClient(second.url).deletion('acme', deletionId);
        return body.state === 'SCHEDULED' ? undefined : { body, at: Date.now() };
      },
      120_000,
      200,
    );
    const receipt = await waitFor(
      'the deletion to complete',
      async () => {
        const { body } = await apiClient(second.url).deletion('acme', deletionId);
        return body.state === 'COMPLETED' || body.state === 'FAILED' ? body : undefined;
      },
      120_000,
      500,
    );

    // Assess: nothing deleted in the window, started after it, finished exactly.
    expect(untouched).toEqual(before);
    expect(accepted.body.state).toBe('SCHEDULED');
    expect(started.at).toBeGreaterThanOrEqual(executeAfter);
    expect(receipt).toMatchObject({ state: 'COMPLETED', objectsDeleted: before.size });
    expect((await listAll(s3, where.bucket, where.prefix)).size).toBe(0);
  });

  it('keeps its place in the table stream: a restart does not hear history again', async () => {
    // Prepare: a deletion completed, and heard by the publisher (its console line), before kill -9.
    const env = {
      AWS_ENDPOINT_URL: inject('awsEndpoint'),
      LETHE_LOCAL_PREFIX: `p${randomUUID().slice(0, 8)}`,
    };
    const first = await startRuntimeProcess(env);
    running.push(first);
    const api = apiClient(first.url);
    await api.create('acme', 'heard');
    const deletionId = String((await api.delete('acme', 'heard')).body.deletionId);
    const completedLine = `deletion ${deletionId} of acme/heard: RUNNING -> COMPLETED`;
    await waitFor('the COMPLETED line', async () =>
      first.output().includes(completedLine) ? true : undefined,
    );
    // The position is saved a second at most after the records it passes.
    await new Promise((resolve) => setTimeout(resolve, 2_500));

    // Act: kill -9, and a new runtime over the same emulator and names.
    await killProcess(first, 'SIGKILL');
    const second = await startRuntimeProcess(env);
    running.push(second);
    const later = apiClient(second.url);
    await later.create('acme', 'after');
    const laterId = String((await later.delete('acme', 'after')).body.deletionId);
    await waitFor('a new deletion heard', async () =>
      second.output().includes(`deletion ${laterId} of acme/after: RUNNING -> COMPLETED`)
        ? true
        : undefined,
    );

    // Assess: the new one is heard, the old one is not heard again.
    expect(second.output()).not.toContain(`deletion ${deletionId}`);
  });
});
