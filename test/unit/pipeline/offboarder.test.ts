import { describe, expect, it, vi } from 'vitest';
import {
  clockOf,
  DeletionNotCancellableError,
  DeletionNotFoundError,
  type DeletionRecord,
  type OffboardingLink,
  type OffboardingRecord,
  PartitionDeletionInProgressError,
  StreamNotFoundError,
  type StreamRecord,
} from '../../../lib/core/index.ts';
import { Offboarder, type OffboarderOptions } from '../../../lib/pipeline/index.ts';
import { type TakenIn, TakenInAlreadyError } from '../../../lib/store/index.ts';
import { aDeletion, aStream, NOW } from '../../helpers/records.ts';

const OFFBOARDING_ID = 'c3d5e7f9-2b4c-4d6e-8f0a-1b2c3d4e5f6a';

/** An offboarding of `acme`, its streams, and stores that behave as their conditions say. */
function world(names: string[], overrides: Partial<OffboardingRecord> = {}) {
  let record: OffboardingRecord = {
    type: 'OFFBOARDING',
    tenant: 'acme',
    offboardingId: OFFBOARDING_ID,
    state: 'RUNNING',
    requestedAt: NOW.toISOString(),
    executeAfter: new Date(NOW.getTime() + 3_600_000).toISOString(),
    updatedAt: NOW.toISOString(),
    fannedOut: false,
    streams: 0,
    ...overrides,
  };
  const links: OffboardingLink[] = [];
  const counted = new Set<string>();
  const linkOnce = (stream: string, deletionId: string, adopted = false) => {
    if (links.some((link) => link.stream === stream)) return false;
    links.push({
      offboardingId: OFFBOARDING_ID,
      tenant: 'acme',
      stream,
      deletionId,
      ...(adopted ? { adopted } : {}),
    });
    record = { ...record, streams: record.streams + 1 };
    return true;
  };
  const deletions = new Map<string, DeletionRecord>();
  const streams: StreamRecord[] = names.map((stream) => aStream({ stream }));
  const offboardings = {
    get: vi.fn(async () => ({ ...record })),
    // A deletion requested before the offboarding: adopted.
    link: vi.fn(async (_: OffboardingRecord, stream: string, deletionId: string) =>
      linkOnce(stream, deletionId, true),
    ),
    // The fake commits the link as its transaction items are made (in the tombstone's), and
    // refuses the transaction as DeletionStore.request does when the link is there already.
    linkItems: vi.fn((_: OffboardingRecord, stream: string, deletionId: string) => {
      if (!linkOnce(stream, deletionId)) {
        throw new TakenInAlreadyError('acme', stream, OFFBOARDING_ID);
      }
      return [];
    }),
    links: vi.fn(async function* () {
      yield* links;
    }),
    advance: vi.fn(async (seen: OffboardingRecord, last: string | undefined) => {
      if (seen.fanoutAfter !== record.fanoutAfter || record.fannedOut) return false;
      record = last ? { ...record, fanoutAfter: last } : { ...record, fannedOut: true };
      return true;
    }),
    complete: vi.fn(async (_: OffboardingRecord, totals: { objectsDeleted: number }) => {
      record = { ...record, state: 'COMPLETED', objectsDeleted: totals.objectsDeleted };
      return true;
    }),
    relink: vi.fn(
      async (_: OffboardingRecord, stream: string, from: string, to: string, adopted = false) => {
        const link = links.find((candidate) => candidate.stream === stream);
        if (link?.deletionId !== from) return false;
        link.deletionId = to;
        if (adopted) link.adopted = true;
        else delete link.adopted;
        return true;
      },
    ),
    // The fake commits the relink as its transaction item is made (in the tombstone's).
    relinkItems: vi.fn((_: OffboardingRecord, stream: string, from: string, to: string) => {
      const link = links.find((candidate) => candidate.stream === stream);
      if (link?.deletionId !== from) throw new TakenInAlreadyError('acme', stream, OFFBOARDING_ID);
      link.deletionId = to;
      delete link.adopted;
      return [] as never;
    }),
    // As its condition: once, for a RUNNING offboarding whose last write was within its window.
    windowEnded: vi.fn(async () => {
      if (record.state !== 'RUNNING' || record.updatedAt >= record.executeAfter) return false;
      record = { ...record, updatedAt: NOW.toISOString() };
      return true;
    }),
    settleCancel: vi.fn(async () => {}),
    // As its transaction: the link names the deletion and is not marked yet, for this offboarding.
    countCompleted: vi.fn(
      async (seen: Pick<OffboardingRecord, 'offboardingId'>, stream: string, id: string) => {
        const link = links.find((candidate) => candidate.stream === stream);
        if (seen.offboardingId !== record.offboardingId || link?.deletionId !== id) return false;
        if (counted.has(stream)) return false;
        counted.add(stream);
        Object.assign(link, { completed: true });
        return true;
      },
    ),
    completedCount: vi.fn(async () => counted.size),
  } satisfies OffboarderOptions['offboardings'];
  const options: OffboarderOptions = {
    offboardings,
    streams: {
      find: async (_tenant, name) => streams.find((stream) => stream.stream === name),
      listAfter: async (_tenant, after, limit) => {
        const rest = streams.filter((stream) => !after || stream.stream > after);
        const page = rest.slice(0, limit);
        return {
          streams: page,
          lastRead: rest.length > limit ? page.at(-1)?.stream : undefined,
        };
      },
    },
    deletions: {
      request: vi.fn(async (tenant: string, stream: string, grace = 0, takenIn?: TakenIn) => {
        // The stream's latest deletion: one under way is answered; a cancelled one is not.
        const existing = [...deletions.values()].filter((d) => d.stream === stream).at(-1);
        if (existing && existing.state !== 'CANCELLED') {
          return { created: false, deletion: existing };
        }
        const deletion = aDeletion({
          tenant,
          stream,
          deletionId: existing ? `${existing.deletionId}+` : `${stream}-deletion`,
          state: grace > 0 ? 'SCHEDULED' : 'PENDING',
          ...(takenIn ? { offboardingId: takenIn.offboardingId } : {}),
        });
        // One transaction: a link refused, nothing written.
        takenIn?.linkItems(deletion);
        deletions.set(deletion.deletionId, deletion);
        return { created: true, deletion };
      }),
      getMany: async (refs) => refs.map((ref) => deletions.get(ref.deletionId)),
      cancel: vi.fn(async (_tenant: string, id: string) => {
        const cancelled = { ...(deletions.get(id) as DeletionRecord), state: 'CANCELLED' as const };
        deletions.set(id, cancelled);
        return cancelled;
      }),
    },
    clock: clockOf(() => NOW),
    pageSize: 2,
  };
  return {
    offboarder: new Offboarder(options),
    record: () => record,
    deletions,
    options,
    links,
    counted,
    streams,
  };
}

describe('Offboarder', () => {
  it("takes on a fan-out that made no step for the stale interval (its step's record failed)", async () => {
    // Arrange: a fan-out that stopped five minutes and a second ago, and one that stepped just now
    const stopped = world(['a', 'b', 'c'], {
      updatedAt: new Date(NOW.getTime() - 301_000).toISOString(),
    });
    const stepping = world(['a', 'b', 'c']);

    // Act
    const outcome = await stopped.offboarder.refresh(stopped.record());
    const left = await stepping.offboarder.refresh(stepping.record());

    // Assess: the stopped one took its next page in; the other was left to its own step
    expect(outcome).toBe('running');
    expect(stopped.links.map((link) => link.stream)).toEqual(['a', 'b']);
    expect(stopped.record().fanoutAfter).toBe('b');
    expect(left).toBe('running');
    expect(stepping.options.deletions.request).not.toHaveBeenCalled();
  });

  it('takes the streams in a page per step, each once, with the grace window left', async () => {
    // Arrange
    const { offboarder, record, options } = world(['a', 'b', 'c', 'd', 'e']);

    // Act: steps until the fan-out is over, each step repeated (a redelivered record)
    const ref = { tenant: 'acme', offboardingId: OFFBOARDING_ID };
    let steps = 0;
    while (!record().fannedOut && steps < 10) {
      const seen = record();
      await offboarder.fanOut(ref);
      // The same record delivered again: its advance fails, and nothing is counted twice.
      (options.offboardings.get as ReturnType<typeof vi.fn>).mockResolvedValueOnce(seen);
      expect(await offboarder.fanOut(ref)).toBe('stale');
      steps++;
    }

    // Assess
    expect(steps).toBe(3);
    expect(record()).toMatchObject({ streams: 5, fannedOut: true });
    expect(options.deletions.request).toHaveBeenCalledWith('acme', 'a', 3600, {
      offboardingId: OFFBOARDING_ID,
      linkItems: expect.any(Function),
    });
  });

  it('waits at a stream whose partition deletion is under way, then takes it on at a later sweep', async () => {
    // Arrange: b's partition deletion runs; pages of two streams (a, b), then (c)
    const { offboarder, record, options, links } = world(['a', 'b', 'c']);
    const request = options.deletions.request as ReturnType<typeof vi.fn>;
    const real = request.getMockImplementation() as (...args: unknown[]) => Promise<unknown>;
    let partitionsRunning = true;
    request.mockImplementation(async (...args: unknown[]) => {
      if (args[1] === 'b' && partitionsRunning) {
        throw new PartitionDeletionInProgressError('acme/b', 'p-1', '2026-11-01');
      }
      return real(...args);
    });
    const ref = { tenant: 'acme', offboardingId: OFFBOARDING_ID };

    // Act: the first step stops at b; the step its write triggers has nothing to take
    const first = await offboarder.fanOut(ref);
    const next = await offboarder.fanOut(ref);

    // Assess: a is taken and recorded, b is not, and the second step wrote nothing
    expect([first, next]).toEqual(['waiting', 'waiting']);
    expect(links.map((link) => link.stream)).toEqual(['a']);
    expect(record()).toMatchObject({ fanoutAfter: 'a', fannedOut: false });
    expect(options.offboardings.advance).toHaveBeenCalledTimes(1);

    // Act: the partition deletion ends; the sweeper finds the fan-out idle and steps it on
    partitionsRunning = false;
    const idle = { ...record(), updatedAt: new Date(NOW.getTime() - 301_000).toISOString() };
    await offboarder.refresh(idle);
    await offboarder.fanOut(ref);

    // Assess: every stream is taken in, once
    expect(links.map((link) => link.stream)).toEqual(['a', 'b', 'c']);
    expect(record()).toMatchObject({ streams: 3, fannedOut: true });
  });

  it('completes only when every deletion it took in has completed, with their sums', async () => {
    // Arrange
    const { offboarder, record, deletions } = world(['a', 'b'], {
      executeAfter: NOW.toISOString(),
    });
    const ref = { tenant: 'acme', offboardingId: OFFBOARDING_ID };
    await offboarder.fanOut(ref);
    await offboarder.fanOut(ref);

    // Act + Assess: one still runs, then both have completed
    deletions.set(
      'a-deletion',
      aDeletion({ deletionId: 'a-deletion', state: 'COMPLETED', objectsDeleted: 3 }),
    );
    expect(await offboarder.refresh(record())).toBe('running');
    deletions.set(
      'b-deletion',
      aDeletion({ deletionId: 'b-deletion', state: 'COMPLETED', objectsDeleted: 4 }),
    );
    expect(await offboarder.refresh(record())).toBe('completed');
    expect(record()).toMatchObject({ state: 'COMPLETED', objectsDeleted: 7 });
  });

  it('completes as its last deletion completes, without a sweep, counting each deletion once', async () => {
    // Arrange: two streams taken in (two steps of two: the second ends the fan-out)
    const { offboarder, record, deletions, counted } = world(['a', 'b'], {
      executeAfter: NOW.toISOString(),
    });
    const ref = { tenant: 'acme', offboardingId: OFFBOARDING_ID };
    await offboarder.fanOut(ref);
    await offboarder.fanOut(ref);
    const complete = (stream: string, objects: number) => {
      const deletion = {
        ...aDeletion({ stream, deletionId: `${stream}-deletion`, objectsDeleted: objects }),
        state: 'COMPLETED' as const,
        offboardingId: OFFBOARDING_ID,
      };
      deletions.set(deletion.deletionId, deletion);
      return deletion;
    };

    // Act
    const first = await offboarder.deletionCompleted(complete('a', 3));
    const repeated = await offboarder.deletionCompleted(complete('a', 3));
    const unlinked = await offboarder.deletionCompleted({
      ...complete('a', 3),
      deletionId: 'an-earlier-deletion',
    });
    const stateAfterOne = record().state;
    const last = await offboarder.deletionCompleted(complete('b', 4));

    // Assess
    expect([first, repeated, unlinked, last]).toEqual([
      'running',
      'not-linked',
      'not-linked',
      'completed',
    ]);
    expect(stateAfterOne).toBe('RUNNING');
    expect(record()).toMatchObject({ state: 'COMPLETED', objectsDeleted: 7 });
    expect(counted).toEqual(new Set(['a', 'b']));
  });

  it('completes at the end of its fan-out when every deletion completed while it took streams in', async () => {
    // Arrange: one step takes a and b in; each deletion (of an empty stream, say) completes,
    // and is counted, before the step records the end of the fan-out.
    const { offboarder, record, deletions, options, counted } = world(['a', 'b'], {
      executeAfter: NOW.toISOString(),
    });
    const request = options.deletions.request;
    options.deletions.request = async (...args: Parameters<typeof request>) => {
      const requested = await request(...args);
      const done = {
        ...requested.deletion,
        state: 'COMPLETED' as const,
        offboardingId: String(requested.deletion.offboardingId),
      };
      deletions.set(done.deletionId, done);
      expect(await offboarder.deletionCompleted(done)).toBe('running');
      return requested;
    };

    // Act
    const outcome = await offboarder.fanOut({ tenant: 'acme', offboardingId: OFFBOARDING_ID });

    // Assess
    expect(outcome).toBe('completed');
    expect(record()).toMatchObject({ state: 'COMPLETED', fannedOut: true });
    expect(counted.size).toBe(2);
  });

  it('cancels every scheduled deletion of a cancelled offboarding, and leaves started ones', async () => {
    // Arrange
    const { offboarder, record, deletions, options } = world(['a', 'b', 'c']);
    const ref = { tenant: 'acme', offboardingId: OFFBOARDING_ID };
    await offboarder.fanOut(ref);
    await offboarder.fanOut(ref);
    deletions.set('c-deletion', aDeletion({ deletionId: 'c-deletion', state: 'RUNNING' }));

    // Act
    const outcome = await offboarder.refresh({ ...record(), state: 'CANCELLED' });

    // Assess
    expect(outcome).toBe('cancelled');
    expect(options.deletions.cancel).toHaveBeenCalledTimes(2);
    expect([...deletions.values()].map((deletion) => deletion.state).sort()).toEqual([
      'CANCELLED',
      'CANCELLED',
      'RUNNING',
    ]);
  });

  it('throws a cancel that failed (throttled) once it has tried every other, and does not settle', async () => {
    // Arrange: a's cancel is throttled; the sweeper holds the tenant's due deletions on a throw
    const { offboarder, record, deletions, options } = world(['a', 'b', 'c']);
    const ref = { tenant: 'acme', offboardingId: OFFBOARDING_ID };
    await offboarder.fanOut(ref);
    await offboarder.fanOut(ref);
    const throttled = Object.assign(new Error('Rate of requests exceeds the allowed throughput'), {
      name: 'ThrottlingException',
    });
    vi.mocked(options.deletions.cancel).mockRejectedValueOnce(throttled);

    // Act
    const refreshing = offboarder.refresh({ ...record(), state: 'CANCELLED' });

    // Assess: b and c are cancelled all the same; a is left SCHEDULED for the next sweep
    await expect(refreshing).rejects.toBe(throttled);
    expect(options.deletions.cancel).toHaveBeenCalledTimes(3);
    expect(deletions.get('a-deletion')?.state).toBe('SCHEDULED');
    expect(deletions.get('b-deletion')?.state).toBe('CANCELLED');
    expect(deletions.get('c-deletion')?.state).toBe('CANCELLED');
    expect(options.offboardings.settleCancel).not.toHaveBeenCalled();
  });

  it('takes a deletion that started, or is gone, between its read and its cancel as ended', async () => {
    // Arrange
    const { offboarder, record, options } = world(['a', 'b']);
    const ref = { tenant: 'acme', offboardingId: OFFBOARDING_ID };
    await offboarder.fanOut(ref);
    vi.mocked(options.deletions.cancel)
      .mockRejectedValueOnce(new DeletionNotCancellableError('a-deletion', 'PENDING'))
      .mockRejectedValueOnce(new DeletionNotFoundError('acme', 'b-deletion'));

    // Act
    const outcome = await offboarder.refresh({ ...record(), state: 'CANCELLED' });

    // Assess
    expect(outcome).toBe('cancelled');
    expect(options.deletions.cancel).toHaveBeenCalledTimes(2);
  });

  it('adopts a deletion requested before it, and a cancel leaves that one to its own schedule', async () => {
    // Arrange: the tenant's own deletion of a, scheduled before the offboarding took a and b in
    const { offboarder, record, deletions, options, links } = world(['a', 'b']);
    const own = aDeletion({
      stream: 'a',
      deletionId: 'own-deletion',
      state: 'SCHEDULED',
      executeAfter: new Date(NOW.getTime() + 600_000).toISOString(),
    });
    deletions.set(own.deletionId, own);
    const ref = { tenant: 'acme', offboardingId: OFFBOARDING_ID };
    await offboarder.fanOut(ref);
    await offboarder.fanOut(ref);

    // Act
    const outcome = await offboarder.refresh({ ...record(), state: 'CANCELLED' });

    // Assess: only the deletion it requested (b's) is cancelled; a's is as the tenant asked
    expect(outcome).toBe('cancelled');
    expect(links).toEqual([
      expect.objectContaining({ stream: 'a', deletionId: 'own-deletion', adopted: true }),
      expect.not.objectContaining({ adopted: true }),
    ]);
    expect(options.deletions.cancel).toHaveBeenCalledTimes(1);
    expect(options.deletions.cancel).toHaveBeenCalledWith('acme', 'b-deletion');
    expect(deletions.get('own-deletion')).toEqual(own);
    expect(deletions.get('b-deletion')?.state).toBe('CANCELLED');
  });

  it('relinks as adopted a deletion requested by someone else after its own was cancelled', async () => {
    // Arrange: fanned out; b's deletion is cancelled, and the tenant requests b's deletion again
    const { offboarder, record, deletions, options, links } = world(['a', 'b']);
    const ref = { tenant: 'acme', offboardingId: OFFBOARDING_ID };
    await offboarder.fanOut(ref);
    await offboarder.fanOut(ref);
    await options.deletions.cancel('acme', 'b-deletion');
    deletions.set('b-own', aDeletion({ stream: 'b', deletionId: 'b-own', state: 'SCHEDULED' }));

    // Act: the running offboarding takes b in again, then is cancelled
    await offboarder.refresh(record());
    await offboarder.refresh({ ...record(), state: 'CANCELLED' });

    // Assess: the link follows the tenant's deletion as adopted, and the cancel leaves it
    expect(links.find((link) => link.stream === 'b')).toMatchObject({
      deletionId: 'b-own',
      adopted: true,
    });
    expect(deletions.get('b-own')?.state).toBe('SCHEDULED');
    expect(deletions.get('a-deletion')?.state).toBe('CANCELLED');
  });

  it('writes the end of its grace window once, at the first look after it, and not within it', async () => {
    // Arrange: two fanned-out offboardings, one whose window ended a second ago
    const hourAgo = new Date(NOW.getTime() - 3_600_000).toISOString();
    const ended = world(['a'], {
      requestedAt: hourAgo,
      updatedAt: hourAgo,
      executeAfter: new Date(NOW.getTime() - 1_000).toISOString(),
    });
    const within = world(['a']);
    for (const { offboarder } of [ended, within]) {
      await offboarder.fanOut({ tenant: 'acme', offboardingId: OFFBOARDING_ID });
    }

    // Act
    await ended.offboarder.refresh(ended.record());
    await ended.offboarder.refresh(ended.record());
    await within.offboarder.refresh(within.record());

    // Assess
    expect([ended.record(), within.record()]).toMatchObject([
      { state: 'RUNNING', fannedOut: true },
      { state: 'RUNNING', fannedOut: true },
    ]);
    expect(ended.options.offboardings.windowEnded).toHaveBeenCalledTimes(1);
    expect(ended.record().updatedAt).toBe(NOW.toISOString());
    expect(within.options.offboardings.windowEnded).not.toHaveBeenCalled();
  });

  it('takes a stream in again when its deletion was cancelled under the running offboarding', async () => {
    // Arrange: fanned out; then a cancelled offboarding's clean-up cancels b's deletion
    const { offboarder, record, deletions, options, links } = world(['a', 'b']);
    const ref = { tenant: 'acme', offboardingId: OFFBOARDING_ID };
    await offboarder.fanOut(ref);
    await offboarder.fanOut(ref);
    await options.deletions.cancel('acme', 'b-deletion');

    // Act
    const outcome = await offboarder.refresh(record());

    // Assess: b has a deletion again, with the window left, and the link follows it
    expect(outcome).toBe('running');
    expect(options.deletions.request).toHaveBeenLastCalledWith('acme', 'b', 3600, {
      offboardingId: OFFBOARDING_ID,
      linkItems: expect.any(Function),
    });
    expect(deletions.get('b-deletion+')?.offboardingId).toBe(OFFBOARDING_ID);
    expect(links.map((link) => link.deletionId)).toEqual(['a-deletion', 'b-deletion+']);
    expect(deletions.get('b-deletion+')?.state).toBe('SCHEDULED');
    expect(record().streams).toBe(2);

    // Act + Assess: it completes once both deletions it now names have completed
    for (const id of ['a-deletion', 'b-deletion+']) {
      deletions.set(id, aDeletion({ deletionId: id, state: 'COMPLETED', objectsDeleted: 2 }));
    }
    expect(await offboarder.refresh(record())).toBe('completed');
    expect(record()).toMatchObject({ state: 'COMPLETED', objectsDeleted: 4 });
  });

  it('completes when it died between taking a cancelled stream in again and relinking it', async () => {
    // Arrange: fanned out; b's deletion cancelled under it; the sweep that takes b in again is
    // killed right after the new deletion's transaction commits
    const { offboarder, record, deletions, options } = world(['a', 'b']);
    const ref = { tenant: 'acme', offboardingId: OFFBOARDING_ID };
    await offboarder.fanOut(ref);
    await offboarder.fanOut(ref);
    await options.deletions.cancel('acme', 'b-deletion');
    const request = vi.mocked(options.deletions.request);
    const committed = request.getMockImplementation();
    request.mockImplementationOnce(async (...args) => {
      await committed?.(...args);
      throw new Error('killed');
    });
    await expect(offboarder.refresh(record())).rejects.toThrow('killed');

    // Act: both deletions complete (b's new one before any sweep: its stream is gone), their
    // records reach the dispatcher, and the next sweep looks
    for (const id of ['a-deletion', 'b-deletion+']) {
      const done = { ...(deletions.get(id) as DeletionRecord), state: 'COMPLETED' as const };
      deletions.set(id, { ...done, objectsDeleted: 2 });
    }
    const counted = [
      await offboarder.deletionCompleted({ ...ref, stream: 'a', deletionId: 'a-deletion' }),
      await offboarder.deletionCompleted({ ...ref, stream: 'b', deletionId: 'b-deletion+' }),
    ];
    request.mockRejectedValueOnce(new StreamNotFoundError('acme', 'b'));
    await offboarder.refresh(record());

    // Assess: the new deletion was linked with its request, counted, and the offboarding ended
    // (before: its link named the cancelled deletion for ever, and every sweep answered running)
    expect(counted).toEqual(['running', 'completed']);
    expect(record()).toMatchObject({ state: 'COMPLETED', objectsDeleted: 4 });
  });

  it('goes on past a stream an earlier run of its step took in, whose deletion was cancelled since', async () => {
    // Arrange: the first run of the first step dies right after taking a in; then a's deletion
    // is cancelled (by the tenant), so a is ACTIVE again when the step's record comes again
    const { offboarder, record, options, links } = world(['a', 'b', 'c']);
    const ref = { tenant: 'acme', offboardingId: OFFBOARDING_ID };
    const request = vi.mocked(options.deletions.request);
    const committed = request.getMockImplementation();
    request.mockImplementationOnce(async (...args) => {
      await committed?.(...args);
      throw new Error('killed');
    });
    await expect(offboarder.fanOut(ref)).rejects.toThrow('killed');
    await options.deletions.cancel('acme', 'a-deletion');

    // Act: the step again (before: refused at a for ever, so the fan-out never ended), the next
    // step, and a sweep
    const steps = [await offboarder.fanOut(ref), await offboarder.fanOut(ref)];
    await offboarder.refresh(record());

    // Assess: every stream taken in once, and a in again by the sweep, its link following
    expect(steps).toEqual(['advanced', 'advanced']);
    expect(record()).toMatchObject({ fannedOut: true, streams: 3 });
    expect(links.map((link) => [link.stream, link.deletionId])).toEqual([
      ['a', 'a-deletion+'],
      ['b', 'b-deletion'],
      ['c', 'c-deletion'],
    ]);
  });

  it("completes when another deletion removed a stream after the offboarding's own deletion of it was cancelled", async () => {
    // Arrange: fanned out; the tenant cancels b's deletion, then requests and completes its own
    // deletion of b before any sweep, so b is DELETED, freed by that deletion
    const { offboarder, record, deletions, options, links, streams } = world(['a', 'b']);
    const ref = { tenant: 'acme', offboardingId: OFFBOARDING_ID };
    await offboarder.fanOut(ref);
    await offboarder.fanOut(ref);
    await options.deletions.cancel('acme', 'b-deletion');
    deletions.set(
      'b-own',
      aDeletion({ stream: 'b', deletionId: 'b-own', state: 'COMPLETED', objectsDeleted: 5 }),
    );
    const b = streams.findIndex((stream) => stream.stream === 'b');
    streams[b] = { ...(streams[b] as StreamRecord), state: 'DELETED', deletedBy: 'b-own' };
    vi.mocked(options.deletions.request).mockRejectedValue(new StreamNotFoundError('acme', 'b'));
    deletions.set(
      'a-deletion',
      aDeletion({ deletionId: 'a-deletion', state: 'COMPLETED', objectsDeleted: 2 }),
    );
    await offboarder.deletionCompleted({ ...ref, stream: 'a', deletionId: 'a-deletion' });

    // Act: the sweep looks (before: the link named the cancelled deletion for ever)
    const outcome = await offboarder.refresh(record());

    // Assess: b's link follows the deletion that removed b, counted; the offboarding completed
    expect(links.find((link) => link.stream === 'b')).toMatchObject({
      deletionId: 'b-own',
      adopted: true,
    });
    expect(outcome).toBe('completed');
    expect(record()).toMatchObject({ state: 'COMPLETED', objectsDeleted: 7 });
  });

  it('completes when a stream freed before streams named what freed them was removed after its cancel', async () => {
    // Arrange: as above, but b's item, DELETED, does not say which deletion freed it
    const { offboarder, record, deletions, options, streams } = world(['a', 'b']);
    const ref = { tenant: 'acme', offboardingId: OFFBOARDING_ID };
    await offboarder.fanOut(ref);
    await offboarder.fanOut(ref);
    await options.deletions.cancel('acme', 'b-deletion');
    const b = streams.findIndex((stream) => stream.stream === 'b');
    streams[b] = { ...(streams[b] as StreamRecord), state: 'DELETED' };
    vi.mocked(options.deletions.request).mockRejectedValue(new StreamNotFoundError('acme', 'b'));
    deletions.set('a-deletion', aDeletion({ deletionId: 'a-deletion', state: 'COMPLETED' }));
    await offboarder.deletionCompleted({ ...ref, stream: 'a', deletionId: 'a-deletion' });

    // Act: two sweeps
    const outcomes = [await offboarder.refresh(record()), await offboarder.refresh(record())];

    // Assess: b's stream is gone, so the stream counts as done; the offboarding completed
    expect(outcomes).toEqual(['completed', 'running']);
    expect(record()).toMatchObject({ state: 'COMPLETED' });
  });

  it('counts at a sweep a completed deletion whose record never reached the dispatcher, before its receipt expires', async () => {
    // Arrange: fanned out; a's deletion completed, its stream record failed for good; b's runs
    const { offboarder, record, deletions, counted } = world(['a', 'b']);
    const ref = { tenant: 'acme', offboardingId: OFFBOARDING_ID };
    await offboarder.fanOut(ref);
    await offboarder.fanOut(ref);
    deletions.set('a-deletion', aDeletion({ deletionId: 'a-deletion', state: 'COMPLETED' }));

    // Act: a sweep; a's receipt expires; b completes, its record counted
    const swept = await offboarder.refresh(record());
    deletions.delete('a-deletion');
    deletions.set(
      'b-deletion',
      aDeletion({ deletionId: 'b-deletion', state: 'COMPLETED', objectsDeleted: 4 }),
    );
    const outcome = await offboarder.deletionCompleted({
      ...ref,
      stream: 'b',
      deletionId: 'b-deletion',
    });

    // Assess (before: a's link, never counted, read no deletion: RUNNING for ever)
    expect(swept).toBe('running');
    expect(counted).toEqual(new Set(['a', 'b']));
    expect(outcome).toBe('completed');
    expect(record()).toMatchObject({ state: 'COMPLETED', objectsDeleted: 4 });
  });

  it("completes when a counted deletion's receipt has expired by the time the last one completes", async () => {
    // Arrange: fanned out; a's deletion completed and was counted, and its receipt expired
    // (receiptRetentionDays) while b's was FAILED and waited for its retry
    const { offboarder, record, deletions } = world(['a', 'b']);
    const ref = { tenant: 'acme', offboardingId: OFFBOARDING_ID };
    await offboarder.fanOut(ref);
    await offboarder.fanOut(ref);
    deletions.set('a-deletion', aDeletion({ deletionId: 'a-deletion', state: 'COMPLETED' }));
    await offboarder.deletionCompleted({ ...ref, stream: 'a', deletionId: 'a-deletion' });
    deletions.delete('a-deletion');

    // Act: b's retried deletion completes
    deletions.set(
      'b-deletion',
      aDeletion({ deletionId: 'b-deletion', state: 'COMPLETED', objectsDeleted: 4 }),
    );
    const outcome = await offboarder.deletionCompleted({
      ...ref,
      stream: 'b',
      deletionId: 'b-deletion',
    });

    // Assess (before: every sweep answered running, the tenant refusing creates for good)
    expect(outcome).toBe('completed');
    expect(record()).toMatchObject({ state: 'COMPLETED', objectsDeleted: 4 });
  });
});
