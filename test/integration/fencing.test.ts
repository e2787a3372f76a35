import { GetQueueAttributesCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForEnd } from '../helpers/cells.ts';
import { type ApiClient, apiClient, parseLocation, waitFor } from '../helpers/http.ts';
import { listAll } from '../helpers/s3.ts';
import { capturingSends, startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * Invariant 3, generation fencing, deterministically: every work message a deletion sent is
 * replayed after its stream was created again and written to; the new incarnation keeps every
 * object, the old deletion's receipt does not move, and nothing is dead-lettered.
 */
describe.skipIf(process.env.LETHE_TEST_API_URL)('generation fencing', () => {
  let target: TestTarget;
  let api: ApiClient;
  const sent: string[] = [];

  beforeAll(async () => {
    // Pages of one key: the old deletion sends a message for every page but its first.
    target = await startTarget({
      settings: { LETHE_PAGE_SIZE: '1' },
      wrapClients: capturingSends(sent),
    });
    api = apiClient(target.baseUrl);
  });
  afterAll(async () => {
    await target?.stop();
  });

  /** The in-process local stack: this test sends to its queues. */
  const local = () => {
    if (!target.local) throw new Error('needs the in-process local stack');
    return target.local;
  };

  /** The URL of the stack's queue `name` (its logical id without CDK's hash). */
  const queueNamed = (name: string) => {
    const queue = target.local?.resources.queues.find(
      (candidate) => candidate.logicalId.replace(/[0-9A-F]{8}$/, '') === name,
    );
    if (!queue) throw new Error(`no queue ${name}`);
    return queue.url;
  };
  const waiting = async (queueUrl: string) => {
    const { Attributes = {} } = await local().clients.sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return (
      Number(Attributes.ApproximateNumberOfMessages) +
      Number(Attributes.ApproximateNumberOfMessagesNotVisible)
    );
  };

  it("replays an old generation's work on the new one, and changes nothing", async () => {
    // Arrange: generation 1, deleted to the end, its messages kept
    await api.create('fence', 'logs');
    for (let n = 0; n < 4; n++) await api.ingest('fence', 'logs', [{ old: n }]);
    const deleted = await api.delete('fence', 'logs', '?graceSeconds=0');
    const old = await waitForEnd(api, 'fence', String(deleted.body.deletionId));
    const replays = [...sent];
    // Generation 2, written to
    const created = await api.create('fence', 'logs');
    for (let n = 0; n < 3; n++) await api.ingest('fence', 'logs', [{ fresh: n }]);
    const fresh = parseLocation(String(created.body.location));
    const before = await listAll(target.s3, fresh.bucket, fresh.prefix);

    // Act: every message of generation 1 again, twice
    const work = queueNamed('Work');
    for (const body of [...replays, ...replays]) {
      await local().clients.sqs.send(new SendMessageCommand({ QueueUrl: work, MessageBody: body }));
    }
    await waitFor('the replayed messages to be taken', async () =>
      (await waiting(work)) === 0 ? true : undefined,
    );

    // Assess
    expect(old).toMatchObject({ state: 'COMPLETED', objectsDeleted: 4 });
    expect(replays.length).toBeGreaterThanOrEqual(3);
    expect(replays.every((body) => JSON.parse(body).generation === 1)).toBe(true);
    expect(created.body).toMatchObject({ state: 'ACTIVE', generation: 2 });
    expect(before.size).toBe(3);
    expect(await listAll(target.s3, fresh.bucket, fresh.prefix)).toEqual(before);
    expect((await api.deletion('fence', String(deleted.body.deletionId))).body).toEqual(old);
    expect((await api.get('fence', 'logs')).body).toMatchObject({
      state: 'ACTIVE',
      generation: 2,
    });
    expect(await waiting(queueNamed('WorkDeadLetters'))).toBe(0);
  });
});
