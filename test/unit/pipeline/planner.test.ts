import {
  GetBucketVersioningCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandInput,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  addCounts,
  chainIdOf,
  clockOf,
  duplicate,
  fenced,
  NO_COUNTS,
  newPlan,
  ok,
  type PlanChainRecord,
  type PlanPageMessage,
  type PlanRecord,
} from '../../../lib/core/index.ts';
import { Planner, type PlannerOptions } from '../../../lib/pipeline/index.ts';
import { aStream, NOW } from '../../helpers/records.ts';

const s3 = mockClient(S3Client);
const PLAN_ID = 'b2c4e6f8-1a3b-4c5d-8e9f-0a1b2c3d4e5f';
const stream = aStream();
const location = stream.prefix;

/** The plan store's conditional writes, in memory: page numbers decide, as in DynamoDB. */
function memoryPlans(): PlannerOptions['plans'] & { plan: () => PlanRecord } {
  let plan = newPlan(stream, PLAN_ID, NOW, { pageSize: 2, workerConcurrency: 20 });
  const chains = new Map<string, PlanChainRecord>();
  return {
    plan: () => plan,
    get: async () => ({ ...plan }),
    register: async (_, layout) => {
      for (const { chainId, prefix, counts } of layout) {
        if (chains.has(chainId)) continue;
        chains.set(chainId, {
          planId: PLAN_ID,
          tenant: plan.tenant,
          chainId,
          prefix,
          page: counts ? 1 : 0,
          ended: counts !== undefined,
          ...(counts ?? NO_COUNTS),
        });
      }
    },
    start: async (_, chainsTotal, versioned) => {
      if (plan.state !== 'PENDING') return duplicate();
      plan = { ...plan, state: 'RUNNING', chainsTotal, versioned };
      return ok(undefined);
    },
    chains: async function* () {
      yield* [...chains.values()].map((chain) => ({ ...chain }));
    },
    chain: async (_, chainId) => {
      const chain = chains.get(chainId);
      return chain && { ...chain };
    },
    countPage: async (chain, counts, next) => {
      const current = chains.get(chain.chainId);
      if (!current || current.page !== chain.page || current.ended) return duplicate();
      if (!next && plan.state !== 'RUNNING') return fenced();
      chains.set(chain.chainId, {
        ...current,
        ...addCounts(current, counts),
        page: current.page + 1,
        ended: next === undefined,
        ...(next ? { cursor: next } : {}),
      });
      if (!next) plan = { ...plan, chainsSettled: plan.chainsSettled + 1 };
      return ok(undefined);
    },
    complete: async (_, totals, multipartUploads) => {
      if (plan.state !== 'RUNNING') return duplicate();
      plan = { ...plan, ...totals, multipartUploads, state: 'COMPLETED' };
      return ok(undefined);
    },
    fail: async (_, reason) => {
      if (plan.state !== 'PENDING' && plan.state !== 'RUNNING') return duplicate();
      plan = { ...plan, state: 'FAILED', reason };
      return ok(undefined);
    },
  };
}

/** Two partitions of three objects each, and one key directly under them. */
const keys: Record<string, string[]> = {
  [`${location}dt=1/`]: ['a', 'b', 'c'],
  [`${location}dt=2/`]: ['d', 'e', 'f'],
};

/** That bucket's answer to a listing. */
function listingOf(input: ListObjectsV2CommandInput) {
  if (input.Delimiter) {
    return {
      CommonPrefixes: Object.keys(keys).map((Prefix) => ({ Prefix })),
      Contents: [{ Key: `${location}manifest.json`, Size: 100 }],
    };
  }
  const all = (keys[input.Prefix ?? ''] ?? []).map((name) => `${input.Prefix}${name}`);
  const after = all.filter((key) => !input.StartAfter || key > input.StartAfter);
  const page = after.slice(0, input.MaxKeys);
  return {
    Contents: page.map((Key) => ({ Key, Size: 10 })),
    IsTruncated: after.length > page.length,
  };
}

function bucket() {
  s3.on(GetBucketVersioningCommand).resolves({});
  s3.on(ListMultipartUploadsCommand).resolves({
    Uploads: [{ Key: `${location}dt=1/x.bin`, UploadId: 'u1' }],
  });
  s3.on(ListObjectsV2Command).callsFake(listingOf);
}

describe('Planner', () => {
  let plans: ReturnType<typeof memoryPlans>;
  let sent: PlanPageMessage[];
  let planner: Planner;

  beforeEach(() => {
    s3.reset();
    bucket();
    plans = memoryPlans();
    sent = [];
    planner = new Planner({
      plans,
      s3: new S3Client({ region: 'us-east-1' }),
      queue: { send: async (messages) => void sent.push(...messages) },
      pageSize: 2,
      clock: clockOf(() => NOW),
    });
  });

  /** Delivers every message sent, until none is left, each `times` times. */
  async function drain(times = 1) {
    while (sent.length > 0) {
      const message = sent.shift();
      if (!message) break;
      for (let n = 0; n < times; n++) await planner.page(message);
    }
  }

  it('lays out a chain per partition, counts the direct keys at once, and sends first pages', async () => {
    // Act
    await planner.start({ tenant: 'acme', planId: PLAN_ID });

    // Assess: the direct key is counted by the listing that found the partitions, in a chain
    // that has ended already (no message for it)
    expect(plans.plan()).toMatchObject({ state: 'RUNNING', chainsTotal: 2, versioned: false });
    expect(sent.map((message) => [message.chainId, message.page])).toEqual([
      [chainIdOf(`${location}dt=1/`), 0],
      [chainIdOf(`${location}dt=2/`), 0],
    ]);
    expect(await plans.chain(PLAN_ID, chainIdOf(location))).toMatchObject({
      prefix: location,
      ended: true,
      objects: 1,
      bytes: 100,
    });
  });

  it('counts every object once, with duplicates of every message, then completes', async () => {
    // Act
    await planner.start({ tenant: 'acme', planId: PLAN_ID });
    await drain(3);

    // Assess: 6 objects of 10 bytes in 4 pages, the manifest in a page of its own
    expect(plans.plan()).toMatchObject({
      state: 'COMPLETED',
      objects: 7,
      versions: 7,
      bytes: 160,
      deleteMarkers: 0,
      pages: 5,
      multipartUploads: 1,
    });
  });

  it('counts past runs of empty truncated pages, as S3 may answer before each page', async () => {
    // Prepare: S3 answers 12 empty truncated pages before each page of a partition, each
    // token leading to the next (the first page of the location, by delimiter, as before).
    s3.on(ListObjectsV2Command).callsFake((input: ListObjectsV2CommandInput) => {
      if (input.Delimiter) return listingOf(input);
      const [run, after] = input.ContinuationToken
        ? JSON.parse(input.ContinuationToken)
        : [0, input.StartAfter];
      if (run < 12) {
        const NextContinuationToken = JSON.stringify([run + 1, after]);
        return { KeyCount: 0, IsTruncated: true, NextContinuationToken };
      }
      return listingOf({ ...input, StartAfter: after });
    });

    // Act: at most 100 messages (a chain that cannot move would go on for ever)
    await planner.start({ tenant: 'acme', planId: PLAN_ID });
    for (let delivered = 0; delivered < 100 && sent.length > 0; delivered++) {
      await planner.page(sent.shift() as PlanPageMessage);
    }

    // Assess
    expect(plans.plan()).toMatchObject({ state: 'COMPLETED', objects: 7, bytes: 160 });
  });

  it('hands the next page on again when the worker that counted a page died before sending it', async () => {
    // Arrange: the first page of the first chain is counted, and its next message lost
    await planner.start({ tenant: 'acme', planId: PLAN_ID });
    const first = sent.shift();
    if (!first) throw new Error('no first page');
    const lost = new Planner({
      plans,
      s3: new S3Client({ region: 'us-east-1' }),
      queue: {
        send: async () => {
          throw new Error('died');
        },
      },
      pageSize: 2,
    });
    await expect(lost.page(first)).rejects.toThrow('died');

    // Act: the message is delivered again
    const outcome = await planner.page(first);
    await drain();

    // Assess
    expect(outcome).toBe('duplicate');
    expect(plans.plan()).toMatchObject({ state: 'COMPLETED', objects: 7, pages: 5 });
  });

  it('counts every chain when a start that died after laying out is taken again over a changed listing', async () => {
    // Arrange: the start dies between registering its chains and starting the plan; by the time
    // its record comes again, dt=1 is gone (a partition deletion took it) and the layout omits it
    const start = plans.start;
    plans.start = async () => {
      throw new Error('killed');
    };
    await expect(planner.start({ tenant: 'acme', planId: PLAN_ID })).rejects.toThrow('killed');
    plans.start = start;
    s3.on(ListObjectsV2Command).callsFake((input) => {
      const prefix = `${location}dt=2/`;
      if (input.Delimiter) {
        return {
          CommonPrefixes: [{ Prefix: prefix }],
          Contents: [{ Key: `${location}manifest.json`, Size: 100 }],
        };
      }
      const all = input.Prefix === prefix ? ['d', 'e', 'f'].map((name) => `${prefix}${name}`) : [];
      const after = all.filter((key) => !input.StartAfter || key > input.StartAfter);
      const page = after.slice(0, input.MaxKeys);
      return {
        Contents: page.map((Key) => ({ Key, Size: 10 })),
        IsTruncated: after.length > page.length,
      };
    });

    // Act: the record comes again, and every page is delivered (dt=1's empty page first)
    await planner.start({ tenant: 'acme', planId: PLAN_ID });
    await drain();

    // Assess: dt=2's three objects and the manifest, none left out by an early completion
    expect(plans.plan()).toMatchObject({ state: 'COMPLETED', objects: 4, versions: 4 });
  });

  const refused = (name: string) =>
    new S3ServiceException({ name, $fault: 'client', $metadata: {}, message: `${name} here` });

  it('ends FAILED with S3 code when S3 refuses a page for good', async () => {
    // Arrange: the partitions' pages are refused once the layout is done
    await planner.start({ tenant: 'acme', planId: PLAN_ID });
    s3.on(ListObjectsV2Command).rejects(refused('AccessDenied'));

    // Act
    const outcome = await planner.page(sent.shift() as PlanPageMessage);

    // Assess
    expect(outcome).toBe('failed');
    expect(plans.plan()).toMatchObject({
      state: 'FAILED',
      reason: { code: 'AccessDenied', message: expect.stringContaining(`s3://`) },
    });
  });

  it('ends FAILED before laying out a bucket that is gone', async () => {
    s3.on(GetBucketVersioningCommand).rejects(refused('NoSuchBucket'));

    const outcome = await planner.start({ tenant: 'acme', planId: PLAN_ID });

    expect(outcome).toBe('failed');
    expect(plans.plan()).toMatchObject({ state: 'FAILED', reason: { code: 'NoSuchBucket' } });
    expect(sent).toEqual([]);
  });

  it('leaves a passing error to the message coming again', async () => {
    await planner.start({ tenant: 'acme', planId: PLAN_ID });
    s3.on(ListObjectsV2Command).rejects(refused('SlowDown'));
    const first = sent.shift() as PlanPageMessage;

    await expect(planner.page(first)).rejects.toThrow('SlowDown');
    expect(plans.plan().state).toBe('RUNNING');
  });

  it('lists only: no S3 command but lists and GetBucketVersioning', async () => {
    await planner.start({ tenant: 'acme', planId: PLAN_ID });
    await drain();

    const commands = new Set(s3.calls().map((call) => call.args[0].constructor.name));
    expect([...commands].sort()).toEqual([
      'GetBucketVersioningCommand',
      'ListMultipartUploadsCommand',
      'ListObjectsV2Command',
    ]);
  });
});
