import { describe, expect, it, vi } from 'vitest';
import type { BusEvent, PutResult } from '../../../lib/bus/index.ts';
import type { DeletionRecord, OffboardingRecord } from '../../../lib/core/index.ts';
import {
  type Announcement,
  DELETION_STATE_CHANGE,
  deletionAnnouncement,
  OFFBOARDING_STATE_CHANGE,
  offboardingAnnouncement,
  StateChangePublisher,
} from '../../../lib/pipeline/index.ts';
import { aDeletion, NOW } from '../../helpers/records.ts';

/** An announcement about `subject`, told apart by `n`. */
const about = (subject: string, n: number): Announcement => ({
  subject,
  event: { detailType: 'Test', detail: { n }, time: new Date(0) },
});
const numbers = (events: BusEvent[]) => events.map((event) => (event.detail as { n: number }).n);

/** A bus that records each call's events; `answer` decides what each call returns. */
function aBus(answer: (events: BusEvent[], call: number) => Promise<PutResult> | PutResult) {
  const calls: number[][] = [];
  const bus = {
    putAll: vi.fn(async (events: BusEvent[]) => {
      calls.push(numbers(events));
      return answer(events, calls.length);
    }),
  };
  return { bus, calls, publisher: new StateChangePublisher({ bus }) };
}

describe('deletionAnnouncement', () => {
  it('announces a new deletion, a new state and a new round, with the receipt as it stood', () => {
    const running = aDeletion({
      state: 'RUNNING',
      updatedAt: '2026-03-01T11:00:05.000Z',
      sequence: 4,
    });
    const changes = [
      { after: aDeletion({ state: 'PENDING' }) },
      { before: aDeletion({ state: 'PENDING' }), after: running },
      { before: running, after: aDeletion({ state: 'PENDING', round: 2 }) },
    ];

    const announced = changes.map((change) => deletionAnnouncement(change));

    expect(announced.map((a) => a?.subject)).toEqual(
      Array(3).fill(`DELETION#${running.deletionId}`),
    );
    expect(announced[1]?.event).toMatchObject({
      detailType: DELETION_STATE_CHANGE,
      detail: {
        state: 'RUNNING',
        deletionId: running.deletionId,
        sequence: 4,
        changedAt: '2026-03-01T11:00:05.000Z',
      },
      time: new Date('2026-03-01T11:00:05.000Z'),
    });
  });

  it.each<[string, Partial<DeletionRecord>, unknown]>([
    ['keys refused (read with GET)', { failedObjects: 3 }, undefined],
    [
      'a reason',
      { reason: { code: 'Stalled', message: 'no progress' } },
      [{ code: 'Stalled', message: 'no progress' }],
    ],
  ])(
    'announces a FAILED deletion with %s without an empty list of failures',
    (_, failed, failures) => {
      const before = aDeletion({ state: 'RUNNING' });

      const announced = deletionAnnouncement({
        before,
        after: { ...before, state: 'FAILED', ...failed },
      });

      expect(announced?.event.detail).toMatchObject({
        state: 'FAILED',
        failedObjects: failed.failedObjects ?? 0,
      });
      expect((announced?.event.detail as { failures?: unknown } | undefined)?.failures).toEqual(
        failures,
      );
    },
  );

  it('announces nothing for a write that left the state and round as they were', () => {
    const before = aDeletion({ chainsSettled: 0 });

    expect(
      deletionAnnouncement({ before, after: { ...before, chainsSettled: 1 } }),
    ).toBeUndefined();
  });
});

describe('offboardingAnnouncement', () => {
  const at = (seconds: number) => new Date(NOW.getTime() + seconds * 1000).toISOString();
  /** An offboarding's item as the table's stream shows it, keys and all, in a one-minute window. */
  const item = (overrides: Partial<OffboardingRecord> = {}): OffboardingRecord =>
    ({
      pk: 'TENANT#acme',
      sk: 'OFFBOARDING',
      sweepPk: 'OFFBOARDINGS',
      sweepSk: `${at(0)}#acme`,
      type: 'OFFBOARDING',
      tenant: 'acme',
      offboardingId: 'c3d5e7f9-2b4c-4d6e-8f0a-1b2c3d4e5f6a',
      state: 'RUNNING',
      requestedAt: at(0),
      executeAfter: at(60),
      updatedAt: at(0),
      fannedOut: false,
      streams: 0,
      ...overrides,
    }) as OffboardingRecord;
  /** The announcements of a run of writes, each image after the one before. */
  const announced = (images: OffboardingRecord[]) =>
    images.flatMap((after, n) => {
      const announcement = offboardingAnnouncement({ before: images[n - 1], after });
      return announcement ? [announcement] : [];
    });
  const states = (announcements: Announcement[]) =>
    announcements.map((a) => (a.event.detail as { state: string }).state);

  it('announces SCHEDULED, RUNNING once its window is over, then COMPLETED: each state once', () => {
    // Arrange: the request, two fan-out steps within the window, the write after it, the end
    const fannedOut = item({ fanoutAfter: 'b', fannedOut: true, streams: 3, updatedAt: at(2) });
    const images = [
      item(),
      item({ fanoutAfter: 'b', streams: 2, updatedAt: at(1) }),
      fannedOut,
      { ...fannedOut, updatedAt: at(65) },
      item({
        ...fannedOut,
        state: 'COMPLETED',
        objectsDeleted: 7,
        bytesDeleted: 70,
        completedAt: at(80),
        updatedAt: at(80),
        sequence: 9,
      }),
    ];

    // Act
    const announcements = announced(images);

    // Assess
    expect(states(announcements)).toEqual(['SCHEDULED', 'RUNNING', 'COMPLETED']);
    expect(announcements[1]?.event.time).toEqual(new Date(at(65)));
    expect(announcements[2]).toEqual({
      subject: 'OFFBOARDING#c3d5e7f9-2b4c-4d6e-8f0a-1b2c3d4e5f6a',
      event: {
        detailType: OFFBOARDING_STATE_CHANGE,
        // The offboarding as the API answers it, less what only its deletions hold; no keys.
        detail: {
          tenant: 'acme',
          offboardingId: 'c3d5e7f9-2b4c-4d6e-8f0a-1b2c3d4e5f6a',
          state: 'COMPLETED',
          streams: 3,
          objectsDeleted: 7,
          bytesDeleted: 70,
          requestedAt: at(0),
          executeAfter: at(60),
          completedAt: at(80),
          // Its place among the item's writes, for a consumer to tell a replay from news.
          sequence: 9,
          changedAt: at(80),
        },
        time: new Date(at(80)),
      },
    });
    expect(Object.keys(announcements[0]?.event.detail ?? {})).toEqual([
      'tenant',
      'offboardingId',
      'state',
      'streams',
      'requestedAt',
      'executeAfter',
      'sequence',
      'changedAt',
    ]);
  });

  it('announces SCHEDULED and CANCELLED for one taken back; its settling announces nothing', () => {
    const cancelled = item({ state: 'CANCELLED', cancelledAt: at(5), updatedAt: at(5) });
    const {
      sweepPk: _pk,
      sweepSk: _sk,
      ...settled
    } = cancelled as OffboardingRecord & {
      sweepPk?: string;
      sweepSk?: string;
    };

    const announcements = announced([item(), cancelled, settled]);

    expect(states(announcements)).toEqual(['SCHEDULED', 'CANCELLED']);
    expect(announcements[1]?.event.detail).toMatchObject({ cancelledAt: at(5) });
  });

  it('announces RUNNING at once without a window, and a new offboarding after an ended one', () => {
    const first = item({ executeAfter: at(0), state: 'COMPLETED', updatedAt: at(9) });
    const next = item({
      offboardingId: '0e2f4a6c-8b0d-4e1f-a3b5-c7d9e1f3a5b7',
      requestedAt: at(10),
      executeAfter: at(10),
      updatedAt: at(10),
    });

    expect(states(announced([item({ executeAfter: at(0) })]))).toEqual(['RUNNING']);
    expect(offboardingAnnouncement({ before: first, after: next })).toMatchObject({
      subject: 'OFFBOARDING#0e2f4a6c-8b0d-4e1f-a3b5-c7d9e1f3a5b7',
      event: { detail: { state: 'RUNNING' } },
    });
  });
});

describe('StateChangePublisher.publish', () => {
  it('puts up to ten events a call, in order', async () => {
    const { calls, publisher } = aBus(() => ({ ok: true }));
    const announcements = Array.from({ length: 23 }, (_, n) => about(`d${n}`, n));

    const result = await publisher.publish(announcements);

    expect(result).toEqual({ published: 23 });
    expect(calls.map((call) => call.length)).toEqual([10, 10, 3]);
    expect(calls.flat()).toEqual(Array.from({ length: 23 }, (_, n) => n));
  });

  it('never puts two events of one subject in a call: the later one waits for the next', async () => {
    const { calls, publisher } = aBus(() => ({ ok: true }));

    await publisher.publish([about('a', 1), about('b', 2), about('a', 3), about('c', 4)]);

    expect(calls).toEqual([
      [1, 2],
      [3, 4],
    ]);
  });

  it('stops at the first event EventBridge refused, and says how many went before it', async () => {
    const { calls, publisher } = aBus((_, call) =>
      call === 2 ? { ok: false, index: 3, reason: 'ThrottlingException slow down' } : { ok: true },
    );
    const announcements = Array.from({ length: 25 }, (_, n) => about(`d${n}`, n));

    const result = await publisher.publish(announcements);

    expect(result).toEqual({ published: 13, refused: 'ThrottlingException slow down' });
    expect(calls).toHaveLength(2);
  });

  it('counts a call that failed outright as refused from its first event', async () => {
    const { publisher } = aBus((_, call) => {
      if (call === 2) throw new Error('socket hang up');
      return { ok: true };
    });
    const announcements = Array.from({ length: 15 }, (_, n) => about(`d${n}`, n));

    expect(await publisher.publish(announcements)).toEqual({
      published: 10,
      refused: 'socket hang up',
    });
  });

  it('makes no call for nothing to announce', async () => {
    const { bus, publisher } = aBus(() => ({ ok: true }));

    expect(await publisher.publish([])).toEqual({ published: 0 });
    expect(bus.putAll).not.toHaveBeenCalled();
  });
});
