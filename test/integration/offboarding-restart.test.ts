import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, inject, it } from 'vitest';
import type { OffboardingView } from '../../lib/core/index.ts';
import { apiClient, waitFor } from '../helpers/http.ts';
import { killProcess, type RuntimeProcess, startRuntimeProcess } from '../helpers/process.ts';

/**
 * Invariant 6 for a whole tenant: kill -9 the local runtime in the middle of an offboarding's
 * fan-out, start it again over the same emulator, and the offboarding completes on its own with
 * every stream taken in exactly once.
 */
describe('restarting the local runtime mid-offboarding', () => {
  const running: RuntimeProcess[] = [];
  afterEach(async () => {
    for (const runtime of running.splice(0)) await killProcess(runtime, 'SIGTERM');
  });

  it('takes every stream in once and completes after kill -9', async () => {
    // Arrange: 45 empty streams, five fan-out steps of 10
    const env = {
      LETHE_OFFBOARDING_PAGE_SIZE: '10',
      AWS_ENDPOINT_URL: inject('awsEndpoint'),
      LETHE_LOCAL_PREFIX: `b${randomUUID().slice(0, 8)}`,
      LETHE_LOCAL_VISIBILITY_TIMEOUT_SECONDS: '4',
      LETHE_SWEEP_INTERVAL_SECONDS: '1',
      LETHE_STALE_AFTER_SECONDS: '3',
    };
    const first = await startRuntimeProcess(env);
    running.push(first);
    const api = apiClient(first.url);
    const tenant = `k${randomUUID().slice(0, 8)}`;
    for (let n = 0; n < 45; n++) await api.create(tenant, `s-${String(n).padStart(3, '0')}`);
    const view = async (client = api) =>
      (await client.call<OffboardingView>('GET', `/v1/tenants/${tenant}/offboarding`)).body;

    // Act: offboard, kill -9 once the fan-out has begun and before it has ended
    const accepted = await api.call<OffboardingView>('DELETE', `/v1/tenants/${tenant}`);
    const begun = await waitFor('the fan-out to begin', async () => {
      const current = await view();
      return current.streams > 0 ? current : undefined;
    });
    await killProcess(first, 'SIGKILL');
    const second = await startRuntimeProcess(env);
    running.push(second);
    const after = apiClient(second.url);
    const done = await waitFor(
      'the offboarding to complete after the restart',
      async () => {
        const current = await view(after);
        return current.state === 'COMPLETED' ? current : undefined;
      },
      240_000,
      1_000,
    );

    // Assess
    expect(accepted.status).toBe(202);
    // Killed in the middle: the fan-out had taken some streams in, not all.
    expect(begun.streams).toBeLessThan(45);
    expect(done).toMatchObject({ streams: 45, deletionStates: { COMPLETED: 45 } });
    expect(new Set(done.deletions).size).toBe(45);
    expect((await after.list(tenant)).body.streams).toEqual([]);
  });
});
