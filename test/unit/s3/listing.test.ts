import { ListObjectsV2Command, ListObjectVersionsCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  childrenOf,
  firstPage,
  type ListingPage,
  paginatePages,
  paginateVersionPages,
} from '../../../lib/s3/index.ts';
import { BUCKET } from '../../helpers/records.ts';

const s3 = mockClient(S3Client);
const client = new S3Client({ region: 'us-east-1' });
const prefix = 'streams/acme/logs/1/';

async function allPages(pages: AsyncIterable<ListingPage>) {
  const collected: ListingPage[] = [];
  for await (const page of pages) collected.push(page);
  return collected;
}

beforeEach(() => {
  s3.reset();
});

describe('paginatePages without a delimiter', () => {
  beforeEach(() => {
    s3.on(ListObjectsV2Command)
      .resolvesOnce({
        Contents: [
          { Key: `${prefix}a`, Size: 10 },
          { Key: `${prefix}b`, Size: 20 },
        ],
        IsTruncated: true,
        NextContinuationToken: 'token-1',
      })
      .resolves({ Contents: [{ Key: `${prefix}c`, Size: 30 }], IsTruncated: false });
  });

  it('goes on with the continuation token within one run, keys URL-encoded', async () => {
    await allPages(paginatePages({ client, pageSize: 2 }, { Bucket: BUCKET, Prefix: prefix }));

    const inputs = s3.commandCalls(ListObjectsV2Command).map((call) => call.args[0].input);
    expect(inputs).toEqual([
      { Bucket: BUCKET, Prefix: prefix, MaxKeys: 2, EncodingType: 'url' },
      {
        Bucket: BUCKET,
        Prefix: prefix,
        MaxKeys: 2,
        EncodingType: 'url',
        ContinuationToken: 'token-1',
      },
    ]);
  });

  it('resumes a recorded page after its last key, with StartAfter', async () => {
    await allPages(
      paginatePages(
        { client, pageSize: 2 },
        { Bucket: BUCKET, Prefix: prefix, After: { key: `${prefix}b` } },
      ),
    );

    const [resumed] = s3.commandCalls(ListObjectsV2Command).map((call) => call.args[0].input);
    expect(resumed).toEqual({
      Bucket: BUCKET,
      Prefix: prefix,
      MaxKeys: 2,
      EncodingType: 'url',
      StartAfter: `${prefix}b`,
    });
  });

  it('yields each page with its objects, sizes and where the next one starts', async () => {
    const pages = await allPages(
      paginatePages({ client, pageSize: 2 }, { Bucket: BUCKET, Prefix: prefix }),
    );

    expect(pages).toEqual([
      {
        objects: [
          { key: `${prefix}a`, size: 10 },
          { key: `${prefix}b`, size: 20 },
        ],
        prefixes: [],
        next: { key: `${prefix}b` },
      },
      {
        objects: [{ key: `${prefix}c`, size: 30 }],
        prefixes: [],
      },
    ]);
  });

  it('resumes from a StartAfter that was written down', async () => {
    await firstPage(
      { client },
      { Bucket: BUCKET, Prefix: prefix, After: { key: `${prefix}a` } },
      false,
    );

    expect(s3.commandCalls(ListObjectsV2Command)[0]?.args[0].input.StartAfter).toBe(`${prefix}a`);
  });

  it('lists a single page for firstPage, even when more keys follow', async () => {
    const page = await firstPage({ client }, { Bucket: BUCKET, Prefix: prefix }, false);

    expect(page.next).toEqual({ key: `${prefix}b` });
    expect(s3.commandCalls(ListObjectsV2Command)).toHaveLength(1);
  });

  it('never asks S3 for more than 1,000 keys per page', async () => {
    await firstPage({ client, pageSize: 5000 }, { Bucket: BUCKET, Prefix: prefix }, false);

    expect(s3.commandCalls(ListObjectsV2Command)[0]?.args[0].input.MaxKeys).toBe(1000);
  });
});

describe('paginatePages with a delimiter', () => {
  beforeEach(() => {
    s3.on(ListObjectsV2Command)
      .resolvesOnce({
        CommonPrefixes: [{ Prefix: `${prefix}dt=2026-01-01/` }],
        IsTruncated: true,
        NextContinuationToken: 'token-1',
      })
      .resolves({ CommonPrefixes: [{ Prefix: `${prefix}dt=2026-01-02/` }], IsTruncated: false });
  });

  it('pages with the continuation token, not StartAfter', async () => {
    await allPages(paginatePages({ client }, { Bucket: BUCKET, Prefix: prefix, Delimiter: '/' }));

    const inputs = s3.commandCalls(ListObjectsV2Command).map((call) => call.args[0].input);
    expect(inputs).toEqual([
      { Bucket: BUCKET, Prefix: prefix, MaxKeys: 1000, EncodingType: 'url', Delimiter: '/' },
      {
        Bucket: BUCKET,
        Prefix: prefix,
        MaxKeys: 1000,
        EncodingType: 'url',
        Delimiter: '/',
        ContinuationToken: 'token-1',
      },
    ]);
  });

  it('yields the child prefixes of every page', async () => {
    const pages = await allPages(
      paginatePages({ client }, { Bucket: BUCKET, Prefix: prefix, Delimiter: '/' }),
    );

    expect(pages.flatMap((page) => page.prefixes)).toEqual([
      `${prefix}dt=2026-01-01/`,
      `${prefix}dt=2026-01-02/`,
    ]);
  });
});

describe('paginateVersionPages', () => {
  const key = (name: string) => `${prefix}${name}`;
  beforeEach(() => {
    s3.on(ListObjectVersionsCommand)
      .resolvesOnce({
        Versions: [
          { Key: key('a'), VersionId: 'a2', Size: 10 },
          { Key: key('a'), VersionId: 'a1', Size: 11 },
        ],
        DeleteMarkers: [{ Key: key('b'), VersionId: 'b3' }],
        IsTruncated: true,
        NextKeyMarker: key('b'),
        NextVersionIdMarker: 'b3',
      })
      .resolves({
        Versions: [{ Key: key('b'), VersionId: 'b2', Size: 20 }],
        IsTruncated: false,
      });
  });

  it("goes on from S3's own NextKeyMarker and NextVersionIdMarker, inside a key's versions", async () => {
    await allPages(
      paginateVersionPages({ client, pageSize: 3 }, { Bucket: BUCKET, Prefix: prefix }),
    );

    const inputs = s3.commandCalls(ListObjectVersionsCommand).map((call) => call.args[0].input);
    expect(inputs).toEqual([
      { Bucket: BUCKET, Prefix: prefix, MaxKeys: 3, EncodingType: 'url' },
      {
        Bucket: BUCKET,
        Prefix: prefix,
        MaxKeys: 3,
        EncodingType: 'url',
        KeyMarker: key('b'),
        VersionIdMarker: 'b3',
      },
    ]);
  });

  it('yields versions and delete markers as one list by key, and the next cursor', async () => {
    const [first, second] = await allPages(
      paginateVersionPages({ client, pageSize: 3 }, { Bucket: BUCKET, Prefix: prefix }),
    );

    expect(first).toEqual({
      objects: [
        { key: key('a'), size: 10, versionId: 'a2' },
        { key: key('a'), size: 11, versionId: 'a1' },
        { key: key('b'), size: 0, versionId: 'b3', marker: true },
      ],
      prefixes: [],
      next: { key: key('b'), versionId: 'b3' },
    });
    expect(second).toEqual({
      objects: [{ key: key('b'), size: 20, versionId: 'b2' }],
      prefixes: [],
    });
  });

  it('resumes from a written-down key and version', async () => {
    await firstPage(
      { client },
      { Bucket: BUCKET, Prefix: prefix, After: { key: key('a'), versionId: 'a2' } },
      true,
    );

    const input = s3.commandCalls(ListObjectVersionsCommand)[0]?.args[0].input;
    expect(input).toMatchObject({ KeyMarker: key('a'), VersionIdMarker: 'a2' });
  });
});

describe('childrenOf', () => {
  it('collects the child prefixes of a location and whether keys lie directly under it', async () => {
    s3.on(ListObjectsV2Command)
      .resolvesOnce({
        CommonPrefixes: [{ Prefix: `${prefix}dt=2026-01-01/` }],
        Contents: [{ Key: `${prefix}loose.json`, Size: 1 }],
        IsTruncated: true,
        NextContinuationToken: 'token-1',
      })
      .resolves({ CommonPrefixes: [{ Prefix: `${prefix}dt=2026-01-02/` }], IsTruncated: false });

    const children = await childrenOf(client, { bucket: BUCKET, prefix }, false);

    expect(children).toEqual({
      prefixes: [`${prefix}dt=2026-01-01/`, `${prefix}dt=2026-01-02/`],
      direct: true,
    });
  });

  it('lists through versions in a versioned bucket', async () => {
    s3.on(ListObjectVersionsCommand).resolves({
      CommonPrefixes: [{ Prefix: `${prefix}dt=2026-01-01/` }],
      IsTruncated: false,
    });

    const children = await childrenOf(client, { bucket: BUCKET, prefix }, true);

    expect(children).toEqual({ prefixes: [`${prefix}dt=2026-01-01/`], direct: false });
    expect(s3.commandCalls(ListObjectVersionsCommand)[0]?.args[0].input.Delimiter).toBe('/');
  });
});

describe("versions and delete markers in S3's order", () => {
  it('merges them by UTF-8 bytes, as S3 lists keys', async () => {
    // U+E000 sorts before U+1F600 in UTF-8 and after it in UTF-16.
    s3.on(ListObjectVersionsCommand).resolves({
      Versions: [{ Key: `${prefix}\u{1F600}`, VersionId: 'v1', Size: 1 }],
      DeleteMarkers: [{ Key: `${prefix}\uE000`, VersionId: 'm1' }],
      IsTruncated: false,
    });

    const page = await firstPage({ client }, { Bucket: BUCKET, Prefix: prefix }, true);

    expect(page.objects.map((entry) => entry.key)).toEqual([
      `${prefix}\uE000`,
      `${prefix}\u{1F600}`,
    ]);
  });
});

describe('keys S3 answers URL-encoded', () => {
  it('decodes keys, prefixes and markers when the answer says EncodingType url', async () => {
    s3.on(ListObjectVersionsCommand).resolves({
      EncodingType: 'url',
      Versions: [{ Key: `${prefix}a+b%0D%0A%26%2B%25.json`, VersionId: 'v1', Size: 1 }],
      CommonPrefixes: [{ Prefix: `${prefix}dt%3D1+%2B/` }],
      IsTruncated: true,
      NextKeyMarker: `${prefix}a+b%0D%0A%26%2B%25.json`,
      NextVersionIdMarker: 'v1',
    });

    const page = await firstPage({ client }, { Bucket: BUCKET, Prefix: prefix }, true);

    expect(page.objects).toEqual([{ key: `${prefix}a b\r\n&+%.json`, size: 1, versionId: 'v1' }]);
    expect(page.prefixes).toEqual([`${prefix}dt=1 +/`]);
    expect(page.next).toEqual({ key: `${prefix}a b\r\n&+%.json`, versionId: 'v1' });
  });

  it('decodes keys and prefixes of a listing of objects that says EncodingType url', async () => {
    s3.on(ListObjectsV2Command).resolves({
      EncodingType: 'url',
      Contents: [{ Key: `${prefix}a+b%0D%0A.json`, Size: 1 }],
      CommonPrefixes: [{ Prefix: `${prefix}dt%3D1+%2B/` }],
      IsTruncated: false,
    });

    const page = await firstPage({ client }, { Bucket: BUCKET, Prefix: prefix }, false);

    expect(page.objects).toEqual([{ key: `${prefix}a b\r\n.json`, size: 1 }]);
    expect(page.prefixes).toEqual([`${prefix}dt=1 +/`]);
  });

  it('takes keys as they are when the answer is not encoded (an older S3 clone)', async () => {
    s3.on(ListObjectsV2Command).resolves({
      Contents: [{ Key: `${prefix}a+b%20.json`, Size: 1 }],
      IsTruncated: false,
    });

    const page = await firstPage({ client }, { Bucket: BUCKET, Prefix: prefix }, false);

    expect(page.objects).toEqual([{ key: `${prefix}a+b%20.json`, size: 1 }]);
  });
});

describe('firstPage over empty truncated pages', () => {
  it('goes past an empty truncated page to the first page with keys', async () => {
    s3.on(ListObjectsV2Command)
      .resolvesOnce({ IsTruncated: true, NextContinuationToken: 't1' })
      .resolves({ Contents: [{ Key: `${prefix}z`, Size: 5 }], IsTruncated: false });

    const page = await firstPage({ client }, { Bucket: BUCKET, Prefix: prefix }, false);

    expect(page.objects).toEqual([{ key: `${prefix}z`, size: 5 }]);
    expect(s3.commandCalls(ListObjectsV2Command)[1]?.args[0].input.ContinuationToken).toBe('t1');
  });

  it('gives up skipping after a bounded run of empty pages, never looping for ever', async () => {
    s3.on(ListObjectVersionsCommand).resolves({
      IsTruncated: true,
      NextKeyMarker: `${prefix}m`,
      NextVersionIdMarker: 'v',
    });

    const page = await firstPage({ client }, { Bucket: BUCKET, Prefix: prefix }, true);

    expect(page.objects).toEqual([]);
    expect(page.next).toEqual({ key: `${prefix}m`, versionId: 'v' });
    // Ten empty pages skipped, the eleventh returned: a listing that never skips makes one call.
    expect(s3.commandCalls(ListObjectVersionsCommand)).toHaveLength(11);
  });
});
