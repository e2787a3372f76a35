import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiClient, apiClient, parseLocation } from '../helpers/http.ts';
import { listAll, partitionedObjects, seedObjects } from '../helpers/s3.ts';
import { startTarget, type TestTarget } from '../helpers/target.ts';

/**
 * Hostile input over the real HTTP API: whatever arrives, the answer is a documented success
 * or a 4xx with an error code, never a 5xx, and nothing outside the addressed stream changes.
 */
const RUNS = Number(process.env.LETHE_HOSTILE_RUNS ?? 400);

const segment = fc.oneof(
  fc.constantFrom('v1', 'tenants', 'streams', 'events', 'deletions', 'retry', 'health'),
  fc.constantFrom('acme', 'logs', 'logs2', 'a', 'z9_-', 'x'.repeat(63)),
  fc.constantFrom(
    '..',
    '.',
    '%2F',
    '%2e%2e',
    '..%2F..%2Fsentinel',
    'a%00b',
    '%E0%A4%A',
    '%',
    'Logs',
    'ñame',
    '😀',
    'x'.repeat(64),
    'a'.repeat(2000),
    ' ',
    '%20',
    'acme%2Fstreams%2Fkeep',
    '3f1c2a4e-8b7d-4c6e-9a1b-2d3e4f5a6b7c',
    'NaN',
    '{tenant}',
  ),
  fc.string({ maxLength: 12 }).map(encodeURIComponent),
);

const path = fc.oneof(
  // Shapes close to real routes, with hostile parts.
  fc
    .tuple(segment, segment, fc.constantFrom('', '/events', '/retry', '/x'))
    .map(([tenant, name, tail]) => `/v1/tenants/${tenant}/streams/${name}${tail}`),
  fc.tuple(segment, segment).map(([tenant, id]) => `/v1/tenants/${tenant}/deletions/${id}`),
  fc.tuple(segment).map(([tenant]) => `/v1/tenants/${tenant}/streams`),
  fc.array(segment, { maxLength: 7 }).map((parts) => `/${parts.join('/')}`),
);

const body = fc.oneof(
  fc.constant(undefined),
  fc.json().map((json) => json),
  fc.array(fc.jsonValue(), { maxLength: 5 }).map((events) => JSON.stringify(events)),
  fc.string({ maxLength: 200 }),
  fc.constantFrom('[', '[]', '{}', 'null', '[1,', '\u0000', '"\\ud800"', `[${'1,'.repeat(10)}1]`),
  fc.constant(`[${JSON.stringify('x'.repeat(1_100_000))}]`),
  // Nested deeper than a writer's recursion goes (400 NestingTooDeep, not a stack overflow).
  fc.constantFrom(
    `${'['.repeat(20_000)}${']'.repeat(20_000)}`,
    `[${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}]`,
  ),
);

const query = fc.oneof(
  fc.constant(''),
  fc.constantFrom(
    '?limit=0',
    '?limit=101',
    '?limit=-1',
    '?limit=abc',
    '?limit=5',
    '?nextToken=abc',
    // Names an object already has (the local server answered 500 to these).
    '?__proto__=x',
    '?constructor=x&limit=5',
  ),
  fc.string({ maxLength: 40 }).map((token) => `?nextToken=${encodeURIComponent(token)}`),
  fc
    .constantFrom(
      '{"pk":"TENANT#sentinel","sk":"STREAM#keep"}',
      '{"pk":"TENANT#acme","sk":"STREAM#a","x":1}',
    )
    .map((key) => `?nextToken=${Buffer.from(key).toString('base64url')}`),
);

const method = fc.constantFrom('GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD');

describe('hostile input to the HTTP API', () => {
  let target: TestTarget;
  let api: ApiClient;
  let sentinel: { bucket: string; prefix: string };
  let sentinelObjects: Map<string, number>;
  beforeAll(async () => {
    target = await startTarget();
    api = apiClient(target.baseUrl);
    const created = await api.create('sentinel', 'keep');
    sentinel = parseLocation(String(created.body.location));
    await seedObjects(target.s3, sentinel.bucket, partitionedObjects(sentinel.prefix, 20, 2));
    await api.ingest('sentinel', 'keep', [{ keep: true }]);
    sentinelObjects = await listAll(target.s3, sentinel.bucket, sentinel.prefix);
    await api.create('acme', 'logs');
  });
  afterAll(async () => {
    await target?.stop();
  });

  it('answers events nested too deeply 400 NestingTooDeep, and the stream takes events after', async () => {
    const deep = `[${'['.repeat(20_000)}${']'.repeat(20_000)}]`;

    const refused = await api.ingest('acme', 'logs', deep);
    const stored = await api.ingest('acme', 'logs', [{ after: true }]);

    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({ error: { code: 'NestingTooDeep' } });
    expect(stored.status).toBe(201);
  });

  it(`answers ${RUNS} hostile requests with a documented success or a coded 4xx`, async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(method, path, query, body, async (verb, where, search, payload) => {
        const response = await fetch(`${target.baseUrl}${where}${search}`, {
          method: verb,
          ...(payload !== undefined && verb !== 'GET' && verb !== 'HEAD' ? { body: payload } : {}),
        });
        const text = await response.text();
        seen.set(response.status, (seen.get(response.status) ?? 0) + 1);
        expect(response.status).toBeLessThan(500);
        if (response.status >= 400 && verb !== 'HEAD') {
          expect(JSON.parse(text)).toMatchObject({
            error: { code: expect.stringMatching(/^[A-Za-z]+$/), message: expect.any(String) },
          });
        } else if (response.status < 400) {
          expect([200, 201, 202]).toContain(response.status);
        }
      }),
      { numRuns: RUNS, seed: Number(process.env.LETHE_HOSTILE_SEED ?? 20261129) },
    );
    console.info(
      `hostile input: ${RUNS} requests, statuses ${JSON.stringify(Object.fromEntries(seen))}`,
    );

    const still = await api.get('sentinel', 'keep');
    expect(still.body).toMatchObject({ state: 'ACTIVE', generation: 1 });
    expect(await listAll(target.s3, sentinel.bucket, sentinel.prefix)).toEqual(sentinelObjects);
  });
});
