import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { type BusEvent, EventBus } from '../../../lib/bus/index.ts';

const eventbridge = mockClient(EventBridgeClient);
const bus = () =>
  new EventBus({ client: new EventBridgeClient({ region: 'us-east-1' }), busName: 'lethe' });
const anEvent = (n: number): BusEvent => ({
  detailType: 'Deletion State Change',
  detail: { n },
  time: new Date(Date.UTC(2026, 2, 1, 11, 0, n)),
});

beforeEach(() => {
  eventbridge.reset();
});

describe('EventBus.putAll', () => {
  it('puts the events in one call, in order, on the bus, from lethe', async () => {
    eventbridge.on(PutEventsCommand).resolves({ FailedEntryCount: 0, Entries: [{}, {}, {}] });

    const result = await bus().putAll([anEvent(1), anEvent(2), anEvent(3)]);

    expect(result).toEqual({ ok: true });
    const [call] = eventbridge.commandCalls(PutEventsCommand);
    expect(call?.args[0].input.Entries).toEqual(
      [1, 2, 3].map((n) => ({
        EventBusName: 'lethe',
        Source: 'lethe',
        DetailType: 'Deletion State Change',
        Detail: JSON.stringify({ n }),
        Time: new Date(Date.UTC(2026, 2, 1, 11, 0, n)),
      })),
    );
  });

  it('names the first entry EventBridge refused, and why', async () => {
    eventbridge.on(PutEventsCommand).resolves({
      FailedEntryCount: 2,
      Entries: [
        { EventId: 'e1' },
        { ErrorCode: 'InternalFailure', ErrorMessage: 'try again' },
        { ErrorCode: 'ThrottlingException', ErrorMessage: 'slow down' },
      ],
    });

    expect(await bus().putAll([anEvent(1), anEvent(2), anEvent(3)])).toEqual({
      ok: false,
      index: 1,
      reason: 'InternalFailure try again',
    });
  });

  it('makes no call for no events, and refuses more than ten', async () => {
    expect(await bus().putAll([])).toEqual({ ok: true });
    await expect(bus().putAll(Array.from({ length: 11 }, (_, n) => anEvent(n)))).rejects.toThrow(
      RangeError,
    );
    expect(eventbridge.calls()).toHaveLength(0);
  });
});
