import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { firstPage, type Page, paginatePages } from '../../lib/pager.ts';
import { BUCKET } from '../helpers/records.ts';

const s3 = mockClient(S3Client);
const client = new S3Client({ region: 'us-east-1' });
const prefix = 'streams/acme/logs/1/';

async function allPages(pages: AsyncIterable<Page>) {
  const collected: Page[] = [];
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

  it('starts each page after the last key of the page before', async () => {
    await allPages(paginatePages({ client, pageSize: 2 }, { Bucket: BUCKET, Prefix: prefix }));

    const inputs = s3.commandCalls(ListObjectsV2Command).map((call) => call.args[0].input);
    expect(inputs).toEqual([
      { Bucket: BUCKET, Prefix: prefix, MaxKeys: 2 },
      { Bucket: BUCKET, Prefix: prefix, MaxKeys: 2, StartAfter: `${prefix}b` },
    ]);
  });

  it('yields each page with its objects, sizes and last key', async () => {
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
        truncated: true,
        lastKey: `${prefix}b`,
      },
      {
        objects: [{ key: `${prefix}c`, size: 30 }],
        prefixes: [],
        truncated: false,
        lastKey: `${prefix}c`,
      },
    ]);
  });

  it('resumes from a StartAfter that was written down', async () => {
    await firstPage({ client }, { Bucket: BUCKET, Prefix: prefix, StartAfter: `${prefix}a` });

    expect(s3.commandCalls(ListObjectsV2Command)[0]?.args[0].input.StartAfter).toBe(`${prefix}a`);
  });

  it('lists a single page for firstPage, even when more keys follow', async () => {
    const page = await firstPage({ client }, { Bucket: BUCKET, Prefix: prefix });

    expect(page.truncated).toBe(true);
    expect(s3.commandCalls(ListObjectsV2Command)).toHaveLength(1);
  });

  it('never asks S3 for more than 1,000 keys per page', async () => {
    await firstPage({ client, pageSize: 5000 }, { Bucket: BUCKET, Prefix: prefix });

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
      { Bucket: BUCKET, Prefix: prefix, MaxKeys: 1000, Delimiter: '/' },
      {
        Bucket: BUCKET,
        Prefix: prefix,
        MaxKeys: 1000,
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
