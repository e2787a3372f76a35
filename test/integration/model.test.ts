import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  armFailpoint,
  disarmFailpoints,
  FAILPOINTS,
  type FailpointName,
  firedCount,
} from '../../lib/support/index.ts';
import { type ApiClient, apiClient, parseLocation, waitFor } from '../helpers/http.ts';
import { listAll } from '../helpers/s3.ts';
import { capturingSends, startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * Model-based property test: random sequences of create / ingest / delete / crash / redeliver
 * / sweep against the real handlers over the emulator, each step checked against a simple
 * model of what the invariants allow.
 */
interface Incarnation {
  generation: number;
  location: string;
  /** Keys of accepted ingests. */
  keys: string[];
  deletionId?: string;
}

interface StreamModel {
  lastGeneration: number;
  current?: Incarnation;
  /** Deletions requested, to check at the end. */
  deleted: Incarnation[];
}

type Model = Map<string, StreamModel>;

interface Real {
  tenant: string;
  api: ApiClient;
  target: TestTarget;
  sent: string[];
  /** Over every run: messages replayed, and armed failpoints that fired. */
  counts: { redelivered: number; crashed: number };
}

/** The API's crash after its tombstone is a 500 its client sees: the crash matrix's case. */
const CRASHABLE = FAILPOINTS.filter((name) => name !== 'api.after-tombstone');

const NAMES = ['logs', 'logs2'];
const streamOf = (model: Model, name: string) => {
  const existing = model.get(name);
  if (existing) return existing;
  const created: StreamModel = { lastGeneration: 0, deleted: [] };
  model.set(name, created);
  return created;
};

/** A deletion may finish at any moment between steps: ask the receipt. */
async function finished(real: Real, tenant: string, incarnation: Incarnation) {
  const { body } = await real.api.deletion(tenant, incarnation.deletionId ?? '');
  return body.state === 'COMPLETED';
}

class Create implements fc.AsyncCommand<Model, Real> {
  constructor(readonly name: string) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const stream = streamOf(model, this.name);
    const reply = await real.api.create(real.tenant, this.name);
    const current = stream.current;
    if (current && !current.deletionId) {
      expect(reply.status).toBe(200);
      expect(reply.body.generation).toBe(current.generation);
      return;
    }
    if (current?.deletionId && reply.status === 409) {
      expect(reply.body).toMatchObject({ error: { code: 'StreamDeleting' } });
      return;
    }
    if (current?.deletionId) expect(await finished(real, real.tenant, current)).toBe(true);
    expect(reply.status).toBe(201);
    expect(reply.body.generation).toBe(stream.lastGeneration + 1);
    stream.lastGeneration += 1;
    stream.current = {
      generation: stream.lastGeneration,
      location: String(reply.body.location),
      keys: [],
    };
  }
  toString = () => `create(${this.name})`;
}

class Ingest implements fc.AsyncCommand<Model, Real> {
  constructor(
    readonly name: string,
    readonly events: number,
  ) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const stream = streamOf(model, this.name);
    const reply = await real.api.ingest(
      real.tenant,
      this.name,
      Array.from({ length: this.events }, (_, index) => ({ index })),
    );
    const current = stream.current;
    if (!current) {
      expect(reply.status).toBe(404);
    } else if (current.deletionId) {
      expect([404, 409]).toContain(reply.status);
      if (reply.status === 404) expect(await finished(real, real.tenant, current)).toBe(true);
    } else {
      expect(reply.status).toBe(201);
      expect(reply.body.count).toBe(this.events);
      current.keys.push(String(reply.body.key));
    }
  }
  toString = () => `ingest(${this.name}, ${this.events})`;
}

class Delete implements fc.AsyncCommand<Model, Real> {
  constructor(readonly name: string) {}
  check = () => true;
  async run(model: Model, real: Real) {
    const stream = streamOf(model, this.name);
    const reply = await real.api.delete(real.tenant, this.name);
    const current = stream.current;
    if (!current) {
      expect(reply.status).toBe(404);
      return;
    }
    if (current.deletionId) {
      if (reply.status === 404) {
        expect(await finished(real, real.tenant, current)).toBe(true);
        stream.current = undefined;
        return;
      }
      expect(reply.status).toBe(202);
      expect(reply.body.deletionId).toBe(current.deletionId);
      return;
    }
    expect(reply.status).toBe(202);
    expect(reply.body.generation).toBe(current.generation);
    current.deletionId = String(reply.body.deletionId);
    stream.deleted.push(current);
  }
  toString = () => `delete(${this.name})`;
}

class Crash implements fc.AsyncCommand<Model, Real> {
  constructor(readonly failpoint: FailpointName) {}
  check = () => true;
  async run() {
    // The next time the pipeline reaches this point, that step fails and must be retried.
    armFailpoint(this.failpoint, 'error');
  }
  toString = () => `crash(${this.failpoint})`;
}

class Redeliver implements fc.AsyncCommand<Model, Real> {
  constructor(readonly pick: number) {}
  check = () => true;
  async run(_: Model, real: Real) {
    const body = real.sent[this.pick % Math.max(1, real.sent.length)];
    const local = real.target.local;
    const queue = local?.resources.queues.find(
      (candidate) =>
        candidate.logicalId.startsWith('Work') && !candidate.logicalId.includes('Dead'),
    );
    if (!body || !local || !queue) return;
    real.counts.redelivered++;
    // A replayed (duplicate, late) message: it must change nothing that was done.
    const { SendMessageCommand } = await import('@aws-sdk/client-sqs');
    await local.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: queue.url, MessageBody: body }),
    );
  }
  toString = () => `redeliver(#${this.pick})`;
}

class Sweep implements fc.AsyncCommand<Model, Real> {
  check = () => true;
  async run(_: Model, real: Real) {
    await real.target.local?.invoke('functions/sweeper.ts', {});
  }
  toString = () => 'sweep()';
}

/** After every step: live incarnations hold exactly their accepted events. */
async function checkLive(model: Model, real: Real, tenant: string) {
  for (const [name, stream] of model) {
    const current = stream.current;
    if (!current || current.deletionId) continue;
    const reply = await real.api.get(tenant, name);
    expect(reply.body).toMatchObject({ state: 'ACTIVE', generation: current.generation });
    const where = parseLocation(current.location);
    expect([...(await listAll(real.target.s3, where.bucket, where.prefix)).keys()].sort()).toEqual(
      [...current.keys].sort(),
    );
  }
}

describe('a model of the invariants', () => {
  let target: TestTarget;
  const sent: string[] = [];
  beforeAll(async () => {
    target = await startTarget({
      settings: { LETHE_PAGE_SIZE: '1', LETHE_STALE_AFTER_SECONDS: '2', LETHE_MAX_ATTEMPTS: '50' },
      visibilityTimeoutSeconds: 2,
      wrapClients: capturingSends(sent),
    });
  });
  afterAll(async () => {
    disarmFailpoints();
    await target?.stop();
  });

  it('holds for random sequences of create, ingest, delete, crash, redeliver and sweep', async () => {
    let run = 0;
    const executed = new Map<string, number>();
    const counts = { redelivered: 0, crashed: 0 };
    const command = fc.oneof(
      fc.constantFrom(...NAMES).map((name) => new Create(name)),
      fc
        .tuple(fc.constantFrom(...NAMES), fc.integer({ min: 1, max: 3 }))
        .map(([name, events]) => new Ingest(name, events)),
      fc.constantFrom(...NAMES).map((name) => new Delete(name)),
      fc.constantFrom(...CRASHABLE).map((name) => new Crash(name)),
      fc.nat().map((pick) => new Redeliver(pick)),
      fc.constant(new Sweep()),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 8, maxLength: 16 }), async (steps) => {
        const tenant = `model${run++}`;
        const model: Model = new Map();
        const real: Real = { tenant, api: apiClient(target.baseUrl), target, sent, counts };
        // Every run starts from two live streams, so deletes and ingests have work to do.
        for (const name of NAMES) await new Create(name).run(model, real);
        for (const step of steps) {
          executed.set(
            String(step).replace(/\(.*$/, ''),
            (executed.get(String(step).replace(/\(.*$/, '')) ?? 0) + 1,
          );
          await step.run(model, real);
          await checkLive(model, real, tenant);
        }
        // Settle: every requested deletion ends COMPLETED, exact, and its location empty,
        // failpoints still armed firing on the way (each fails its step once).
        for (const stream of model.values()) {
          for (const incarnation of stream.deleted) {
            const receipt = await waitFor(`deletion ${incarnation.deletionId}`, async () => {
              const { body } = await real.api.deletion(tenant, incarnation.deletionId ?? '');
              return body.state === 'COMPLETED' || body.state === 'FAILED' ? body : undefined;
            });
            expect(receipt).toMatchObject({
              state: 'COMPLETED',
              objectsDeleted: incarnation.keys.length,
            });
            const where = parseLocation(incarnation.location);
            expect((await listAll(target.s3, where.bucket, where.prefix)).size).toBe(0);
          }
        }
        await checkLive(model, real, tenant);
        counts.crashed += CRASHABLE.reduce((sum, name) => sum + firedCount(name), 0);
        disarmFailpoints();
      }),
      {
        numRuns: Number(process.env.LETHE_MODEL_RUNS ?? 8),
        seed: Number(process.env.LETHE_MODEL_SEED ?? 7),
        endOnFailure: true,
      },
    );
    console.info(
      `model: ${run} runs, commands ${JSON.stringify(Object.fromEntries(executed))}, ${JSON.stringify(counts)}`,
    );
    // The property must have exercised deletions, replays and crashes, not only creates.
    expect(executed.get('delete') ?? 0).toBeGreaterThanOrEqual(run);
    expect(counts.redelivered).toBeGreaterThan(0);
    expect(counts.crashed).toBeGreaterThan(0);
  });
});
