import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertCellCompleted, prepareCell, requestDeletion, waitForEnd } from '../helpers/cells.ts';
import { type ApiClient, apiClient } from '../helpers/http.ts';
import { listAll } from '../helpers/s3.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * The deletion lifecycle over HTTP: a grace window, cancel, expedite and the list of a
 * tenant's deletions, end to end on the local stack.
 */
describe('the deletion lifecycle', () => {
  let target: TestTarget;
  let api: ApiClient;
  const tenant = () => `l${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    target = await startTarget();
    api = apiClient(target.baseUrl);
  });
  afterAll(async () => {
    await target?.stop();
  });

  describe('during the grace window', () => {
    it('answers 202 SCHEDULED with executeAfter, and touches nothing', async () => {
      // Prepare
      const cell = await prepareCell(api, target.s3, tenant(), 12);
      const before = Date.now();

      // Act
      const reply = await api.delete(cell.tenant, 'logs', '?graceSeconds=3600');

      // Assess
      expect(reply.status).toBe(202);
      expect(reply.body).toMatchObject({ state: 'SCHEDULED', objectsDeleted: 0 });
      const executeAfter = Date.parse(String(reply.body.executeAfter));
      expect(executeAfter).toBeGreaterThanOrEqual(before + 3_600_000 - 1000);
      expect(executeAfter).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1000);
      expect(await api.get(cell.tenant, 'logs')).toMatchObject({
        status: 200,
        body: { state: 'DELETING', deletionId: reply.body.deletionId },
      });
      expect((await listAll(target.s3, cell.location.bucket, cell.location.prefix)).size).toBe(
        cell.objects,
      );
    });

    it('refuses create and ingest with 409 and a Retry-After past the window', async () => {
      const cell = await prepareCell(api, target.s3, tenant(), 3);
      const { body } = await api.delete(cell.tenant, 'logs', '?graceSeconds=600');

      const create = await api.create(cell.tenant, 'logs');
      const ingest = await api.ingest(cell.tenant, 'logs', [{ late: true }]);

      for (const refused of [create, ingest]) {
        expect(refused.status).toBe(409);
        expect(refused.body).toMatchObject({ error: { code: 'StreamDeleting' } });
        expect(JSON.stringify(refused.body)).toContain(String(body.deletionId));
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(595);
      }
    });

    it('answers a repeated DELETE with the same deletion and an unmoved executeAfter', async () => {
      const cell = await prepareCell(api, target.s3, tenant(), 3);
      const first = await api.delete(cell.tenant, 'logs', '?graceSeconds=600');

      const again = await api.delete(cell.tenant, 'logs', '?graceSeconds=5');
      const plain = await api.delete(cell.tenant, 'logs');

      for (const repeat of [again, plain]) {
        expect(repeat.status).toBe(202);
        expect(repeat.body.deletionId).toBe(first.body.deletionId);
        expect(repeat.body.executeAfter).toBe(first.body.executeAfter);
      }
    });
  });

  describe('cancel', () => {
    it('takes the deletion back: CANCELLED, the stream ACTIVE again as it was, every object kept', async () => {
      // Prepare
      const cell = await prepareCell(api, target.s3, tenant(), 12);
      const stream = (await api.get(cell.tenant, 'logs')).body;
      const { body } = await api.delete(cell.tenant, 'logs', '?graceSeconds=600');

      // Act
      const cancelled = await api.cancel(cell.tenant, String(body.deletionId));

      // Assess
      expect(cancelled.status).toBe(200);
      expect(cancelled.body).toMatchObject({
        deletionId: body.deletionId,
        state: 'CANCELLED',
        objectsDeleted: 0,
        cancelledAt: expect.any(String),
      });
      const after = await api.get(cell.tenant, 'logs');
      expect(after.body).toMatchObject({
        state: 'ACTIVE',
        generation: stream.generation,
        location: stream.location,
      });
      expect(after.body.deletionId).toBeUndefined();
      expect((await listAll(target.s3, cell.location.bucket, cell.location.prefix)).size).toBe(
        cell.objects,
      );
      expect((await api.ingest(cell.tenant, 'logs', [{ kept: true }])).status).toBe(201);
      expect((await api.deletion(cell.tenant, String(body.deletionId))).body.state).toBe(
        'CANCELLED',
      );
    });

    it('refuses a second cancel, an expedite of a cancelled deletion, and another tenant', async () => {
      const cell = await prepareCell(api, target.s3, tenant(), 3);
      const id = String(
        (await api.delete(cell.tenant, 'logs', '?graceSeconds=600')).body.deletionId,
      );
      await api.cancel(cell.tenant, id);

      const again = await api.cancel(cell.tenant, id);
      const expedite = await api.expedite(cell.tenant, id);
      const stranger = await api.cancel(`x${cell.tenant}`, id);

      expect(again).toMatchObject({
        status: 409,
        body: { error: { code: 'DeletionNotCancellable' } },
      });
      expect(expedite).toMatchObject({
        status: 409,
        body: { error: { code: 'DeletionNotScheduled' } },
      });
      expect(stranger).toMatchObject({
        status: 404,
        body: { error: { code: 'DeletionNotFound' } },
      });
    });

    it('refuses to cancel a deletion that has started', async () => {
      const cell = await prepareCell(api, target.s3, tenant(), 3);
      const id = await requestDeletion(api, cell.tenant);

      const cancel = await api.cancel(cell.tenant, id);
      await waitForEnd(api, cell.tenant, id);
      const afterEnd = await api.cancel(cell.tenant, id);

      expect(cancel).toMatchObject({
        status: 409,
        body: { error: { code: 'DeletionNotCancellable' } },
      });
      expect(afterEnd.status).toBe(409);
    });
  });

  describe('start', () => {
    it('expedite starts a scheduled deletion now, and it completes exactly', async () => {
      const cell = await prepareCell(api, target.s3, tenant(), 20);
      const id = String(
        (await api.delete(cell.tenant, 'logs', '?graceSeconds=3600')).body.deletionId,
      );

      const expedited = await api.expedite(cell.tenant, id);
      const receipt = await waitForEnd(api, cell.tenant, id);

      expect(expedited.status).toBe(202);
      expect(expedited.headers.get('location')).toBe(`/v1/tenants/${cell.tenant}/deletions/${id}`);
      expect(Date.parse(String(expedited.body.executeAfter))).toBeLessThanOrEqual(Date.now());
      await assertCellCompleted(api, target.s3, cell, receipt);
    });

    it('a due deletion starts by itself after its window, and completes exactly', async () => {
      const cell = await prepareCell(api, target.s3, tenant(), 20);
      const id = String((await api.delete(cell.tenant, 'logs', '?graceSeconds=3')).body.deletionId);

      // Within its window (two requests, three seconds) it waits, its data untouched.
      const waiting = await api.deletion(cell.tenant, id);
      const untouched = await listAll(target.s3, cell.location.bucket, cell.location.prefix);
      const receipt = await waitForEnd(api, cell.tenant, id);

      expect(waiting.body).toMatchObject({ state: 'SCHEDULED', objectsDeleted: 0 });
      expect(untouched.size).toBe(cell.objects);
      await assertCellCompleted(api, target.s3, cell, receipt);
    });

    it('treats graceSeconds=0 as no window', async () => {
      const cell = await prepareCell(api, target.s3, tenant(), 3);

      const reply = await api.delete(cell.tenant, 'logs', '?graceSeconds=0');

      expect(reply.body.state).not.toBe('SCHEDULED');
      expect(reply.body.executeAfter).toBe(reply.body.requestedAt);
    });

    it.each(['-1', '2592001', '1.5', 'soon', ''])(
      'refuses graceSeconds=%s with 400 InvalidGrace, and deletes nothing',
      async (grace) => {
        const cell = await prepareCell(api, target.s3, tenant(), 2);

        const reply = await api.delete(cell.tenant, 'logs', `?graceSeconds=${grace}`);

        expect(reply).toMatchObject({ status: 400, body: { error: { code: 'InvalidGrace' } } });
        expect((await api.get(cell.tenant, 'logs')).body.state).toBe('ACTIVE');
      },
    );
  });

  describe("the list of a tenant's deletions", () => {
    it("lists newest first, filters by state, pages, and shows no other tenant's", async () => {
      // Prepare: three deletions of one tenant (one cancelled, two scheduled), one of another.
      const name = tenant();
      const ids: string[] = [];
      for (const stream of ['a', 'b', 'c']) {
        await api.create(name, stream);
        ids.push(String((await api.delete(name, stream, '?graceSeconds=600')).body.deletionId));
      }
      await api.cancel(name, ids[0] ?? '');
      await api.create(`x${name}`, 'a');
      await api.delete(`x${name}`, 'a', '?graceSeconds=600');

      // Act
      const all = await api.deletions(name);
      const scheduled = await api.deletions(name, '?state=SCHEDULED');
      const first = await api.deletions(name, '?limit=2');
      const rest = await api.deletions(name, `?limit=2&nextToken=${first.body.nextToken}`);

      // Assess
      const idsOf = (body: Record<string, unknown>) =>
        (body.deletions as Array<{ deletionId: string }>).map((deletion) => deletion.deletionId);
      expect(idsOf(all.body)).toEqual([...ids].reverse());
      expect(idsOf(scheduled.body)).toEqual([ids[2], ids[1]]);
      expect([...idsOf(first.body), ...idsOf(rest.body)]).toEqual([...ids].reverse());
      expect(rest.body.nextToken).toBeUndefined();
      expect((all.body.deletions as Array<Record<string, unknown>>)[2]).toMatchObject({
        state: 'CANCELLED',
        executeAfter: expect.any(String),
      });
    });

    it.each([
      ['?state=DONE', 'InvalidState'],
      ['?limit=0', 'InvalidLimit'],
      ['?limit=101', 'InvalidLimit'],
      ['?nextToken=bm9wZQ', 'InvalidNextToken'],
    ])('refuses %s with 400 %s', async (query, code) => {
      const reply = await api.deletions(tenant(), query);

      expect(reply).toMatchObject({ status: 400, body: { error: { code } } });
    });
  });
});
