import { randomUUID } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  armFailpoint,
  disarmFailpoints,
  FAILPOINTS,
  type FailpointName,
  firedCount,
} from '../../lib/support/index.ts';
import { assertCellCompleted, prepareCell, requestDeletion, waitForEnd } from '../helpers/cells.ts';
import { apiClient } from '../helpers/http.ts';
import { killProcess, type RuntimeProcess, startRuntimeProcess } from '../helpers/process.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * The crash matrix: every failpoint x {the failed step is redelivered, the local runtime is
 * killed and restarted}. Each cell ends COMPLETED, exact, verified, touching nothing else.
 */

/** Failpoints reached only on a path that must be set up: the sweeper acts on stale work. */
const SETUP: Partial<Record<FailpointName, string>> = {
  // The dispatcher gives up (its record goes to the on-failure queue), so only the sweeper
  // can start the chains.
  'sweeper.after-claim': 'dispatcher.before-enqueue=error*6',
};

/** Failpoints on the path of a deletion with a grace window: the sweeper starts it when due. */
const QUERY: Partial<Record<FailpointName, string>> = {
  'sweeper.after-begin': '?graceSeconds=1',
};

const FAST = {
  LETHE_PAGE_SIZE: '20',
  LETHE_STALE_AFTER_SECONDS: '3',
  // Stale after 3 s on a loaded machine means many resumes; the stall limit is tested apart.
  LETHE_MAX_ATTEMPTS: '50',
};

describe('failpoint x redelivery (in-process)', () => {
  let target: TestTarget;
  beforeAll(async () => {
    target = await startTarget({ settings: FAST, visibilityTimeoutSeconds: 3 });
  });
  afterAll(async () => {
    disarmFailpoints();
    await target?.stop();
  });
  afterEach(() => disarmFailpoints());

  it.each(FAILPOINTS.map((name, index) => [name, index] as const))(
    '%s: the step fails once, is retried, and the deletion completes',
    async (name, index) => {
      const api = apiClient(target.baseUrl);
      const cell = await prepareCell(api, target.s3, `redo${index}`);
      const setup = SETUP[name];
      if (setup) armFailpoint('dispatcher.before-enqueue', 'error', 6);
      armFailpoint(name, 'error');

      const deletionId = await requestDeletion(api, cell.tenant, QUERY[name]);
      const receipt = await waitForEnd(api, cell.tenant, deletionId);

      expect(firedCount(name)).toBe(1);
      await assertCellCompleted(api, target.s3, cell, receipt);
    },
  );
});

describe('failpoint x kill -9 and restart (child processes)', () => {
  const running: RuntimeProcess[] = [];
  afterEach(async () => {
    for (const runtime of running.splice(0)) await killProcess(runtime, 'SIGTERM');
  });

  it.each(FAILPOINTS.map((name, index) => [name, index] as const))(
    '%s: the runtime dies there, a new one finishes the deletion',
    async (name, index) => {
      const endpoint = inject('awsEndpoint');
      const env = {
        AWS_ENDPOINT_URL: endpoint,
        LETHE_LOCAL_PREFIX: `k${index}${randomUUID().slice(0, 6)}`,
        LETHE_LOCAL_VISIBILITY_TIMEOUT_SECONDS: '3',
        LETHE_SWEEP_INTERVAL_SECONDS: '1',
        ...FAST,
      };
      const failpoints = [SETUP[name], `${name}=crash`].filter(Boolean).join(',');
      const first = await startRuntimeProcess({ ...env, LETHE_FAILPOINTS: failpoints });
      running.push(first);
      const s3 = new S3Client({ forcePathStyle: true });
      const cell = await prepareCell(apiClient(first.url), s3, `kill${index}`);

      // The DELETE itself may die with the runtime (api.after-tombstone): then it is repeated.
      const accepted = apiClient(first.url)
        .delete(cell.tenant, 'logs', QUERY[name])
        .then((reply) => (reply.status === 202 ? String(reply.body.deletionId) : undefined))
        .catch(() => undefined);
      const exit = await new Promise<NodeJS.Signals | null>((resolve) =>
        first.child.once('exit', (_, signal) => resolve(signal)),
      );
      const second = await startRuntimeProcess(env);
      running.push(second);
      const api = apiClient(second.url);
      const deletionId = (await accepted) ?? (await requestDeletion(api, cell.tenant, QUERY[name]));
      const receipt = await waitForEnd(api, cell.tenant, deletionId);

      expect(exit).toBe('SIGKILL');
      await assertCellCompleted(api, s3, cell, receipt);
    },
  );
});
