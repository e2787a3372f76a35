import { describe, expect, it, vi } from 'vitest';
import type { BusEvent, PutResult } from '../../../lib/bus/index.ts';
import {
  type Announcement,
  DELETION_STATE_CHANGE,
  deletionAnnouncement,
  StateChangePublisher,
} from '../../../lib/pipeline/index.ts';
import { aDeletion } from '../../helpers/records.ts';

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
    const running = aDeletion({ state: 'RUNNING', updatedAt: '2026-03-01T11:00:05.000Z' });
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
      detail: { state: 'RUNNING', deletionId: running.deletionId },
      time: new Date('2026-03-01T11:00:05.000Z'),
    });
  });

  it('announces nothing for a write that left the state and round as they were', () => {
    const before = aDeletion({ chainsSettled: 0 });

    expect(
      deletionAnnouncement({ before, after: { ...before, chainsSettled: 1 } }),
    ).toBeUndefined();
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
