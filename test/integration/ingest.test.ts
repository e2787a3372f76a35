import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, apiClient, parseLocation } from '../helpers/http.ts';
import { listAll } from '../helpers/s3.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * Ingest over HTTP through the local stack, read back from S3: what is stored is what was
 * sent, byte for byte, and a body that is not UTF-8 is refused before anything is stored.
 */
describe('ingesting events', () => {
  let target: TestTarget;
  let api: ApiClient;
  let location: { bucket: string; prefix: string };
  const post = (body: Buffer) =>
    fetch(`${target.baseUrl}/v1/tenants/acme/streams/exact/events`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body,
    });

  beforeAll(async () => {
    target = await startTarget();
    api = apiClient(target.baseUrl);
    const created = await api.create('acme', 'exact');
    location = parseLocation(String(created.body.location));
  });

  afterAll(async () => {
    await target?.stop();
  });

  it('stores the bytes sent: digits, 1e400, -0, a repeated name and the layout survive', async () => {
    // Prepare: what JSON.parse then JSON.stringify would change
    const sent = Buffer.from(
      '[\n  {"n": 12345678901234567890, "big": 1e400, "f": 1.50, "z": -0, "a": 1, "a": 2, "s": "café 🦀"}\n]\n',
    );

    // Act
    const answer = await post(sent);

    // Assess
    expect(answer.status).toBe(201);
    const { key, count } = (await answer.json()) as { key: string; count: number };
    expect(count).toBe(1);
    expect(key.startsWith(location.prefix)).toBe(true);
    const stored = await target.s3.send(
      new GetObjectCommand({ Bucket: location.bucket, Key: key }),
    );
    expect(Buffer.from((await stored.Body?.transformToByteArray()) ?? [])).toEqual(sent);
  });

  it('refuses a body that is not UTF-8 with 400 InvalidJson, naming the offset, and stores nothing', async () => {
    // Prepare
    const before = await listAll(target.s3, location.bucket, location.prefix);

    // Act
    const answer = await post(Buffer.from('[{"msg":"caf\xe9 \xff\xfe"}]', 'latin1'));

    // Assess
    expect(answer.status).toBe(400);
    const { error } = (await answer.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('InvalidJson');
    expect(error.message).toContain('invalid UTF-8 at byte offset 12 (0xe9)');
    expect(await listAll(target.s3, location.bucket, location.prefix)).toEqual(before);
  });
});
