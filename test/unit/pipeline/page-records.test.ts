import { ListObjectsV2Command, ListObjectVersionsCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type ChainLayout,
  chainIdOf,
  compareKeys,
  isInRange,
  type ListedObject,
} from '../../../lib/core/index.ts';
import { chainsOver } from '../../../lib/pipeline/chain-layout.ts';
import { leftOfPage } from '../../../lib/pipeline/page-counts.ts';
import { firstPageOf, isInPage, listPageAgain } from '../../../lib/pipeline/page-records.ts';

const location = 'streams/acme/logs/1/';
const day = (n: number) => `${location}dt=2026-01-0${n}/`;
const listed = (...keys: string[]): ListedObject[] => keys.map((key) => ({ key, size: 2 }));
const overDay = (n: number): ChainLayout => ({ chainId: chainIdOf(day(n)), prefix: day(n) });

describe('firstPageOf', () => {
  it("is the whole page, going on where the listing does, when every key is the chain's", () => {
    const objects = listed(`${day(1)}a`, `${day(1)}b`);
    const page = firstPageOf(overDay(1), { objects, next: { key: `${day(1)}b` } });
    expect(page).toEqual({
      page: { page: 0, lastKey: `${day(1)}b`, count: 2, bytes: 4 },
      objects,
      next: { key: `${day(1)}b` },
    });
  });

  it("ends the chain with the page once a key after the chain's was listed", () => {
    const listing = { objects: listed(`${day(1)}a`, `${day(2)}a`), next: { key: `${day(2)}a` } };
    const page = firstPageOf(overDay(1), listing);
    expect(page?.objects).toEqual(listed(`${day(1)}a`));
    expect(page).not.toHaveProperty('next');
  });

  it('cuts a range chain at its upper bound', () => {
    const chain = { chainId: 'run', prefix: location, range: { below: day(2) } };
    const listing = { objects: listed(`${day(1)}a`, `${day(2)}a`), next: { key: `${day(2)}a` } };
    expect(firstPageOf(chain, listing)).toEqual({
      page: { page: 0, lastKey: `${day(1)}a`, count: 1, bytes: 2 },
      objects: listed(`${day(1)}a`),
    });
  });

  it("leaves out keys before the chain's, and is none when the page holds none of its keys", () => {
    const before = listed(`${location}a.json`);
    expect(firstPageOf(overDay(1), { objects: before, next: { key: `${location}a.json` } })).toBe(
      undefined,
    );
    const page = firstPageOf(overDay(1), { objects: [...before, ...listed(`${day(1)}a`)] });
    expect(page?.objects).toEqual(listed(`${day(1)}a`));
  });

  it('names the versions of its last key that are its own, in a versioned listing', () => {
    const objects = [
      { key: `${day(1)}a`, size: 1, versionId: 'v2' },
      { key: `${day(1)}a`, size: 1, versionId: 'v1' },
    ];
    const page = firstPageOf(overDay(1), { objects, next: { key: `${day(1)}a`, versionId: 'v1' } });
    expect(page?.page.lastKeyVersions).toEqual(['v2', 'v1']);
  });

  it("is the first chain's first keys, and never ends the chain while it has keys left", () => {
    // Any location: child prefixes of any size, keys directly under it, any page size.
    const locationKeys = fc
      .tuple(
        fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 2, maxLength: 12 }),
        fc.array(fc.string({ unit: 'grapheme-ascii', maxLength: 6 }), { maxLength: 8 }),
      )
      .map(([sizes, direct]) => {
        const keys = new Set<string>(direct.map((name) => `${location}${name.replace('/', '')}`));
        sizes.forEach((size, n) => {
          for (let i = 0; i < size; i++) keys.add(`${location}p${n}/k${i}`);
        });
        return [...keys].sort(compareKeys);
      });
    fc.assert(
      fc.property(locationKeys, fc.integer({ min: 1, max: 60 }), (keys, pageSize) => {
        const objects = listed(...keys.slice(0, pageSize));
        const listing = {
          objects,
          ...(keys.length > pageSize ? { next: { key: keys[pageSize - 1] as string } } : {}),
        };
        const children = [
          ...new Set(
            keys
              .filter((key) => key.slice(location.length).includes('/'))
              .map((key) => key.slice(0, key.indexOf('/', location.length) + 1)),
          ),
        ];
        const layouts = [
          chainsOver(location, children, objects, pageSize)[0],
          children[0] && { chainId: 'child', prefix: children[0] },
          { chainId: 'location', prefix: location },
        ];
        for (const chain of layouts) {
          if (!chain) continue;
          const own = keys.filter(
            (key) => key.startsWith(chain.prefix) && isInRange(key, chain.range ?? {}),
          );
          const page = firstPageOf(chain, listing);
          const count = page?.objects.length ?? 0;
          expect(page?.objects.map((object) => object.key) ?? []).toEqual(own.slice(0, count));
          if (page && own.length > count) expect(page.next).toBeDefined();
          if (page) expect(page.page.count).toBe(count);
          // None only when the chain's first key lies beyond the page.
          if (!page && own.length > 0)
            expect(keys.indexOf(own[0] as string)).toBeGreaterThanOrEqual(pageSize);
        }
      }),
    );
  });
});

describe('isInPage', () => {
  it("places keys in S3's order (UTF-8 bytes), not JavaScript's (UTF-16 units)", () => {
    // U+E000 sorts before U+1F600 in UTF-8 and after it in UTF-16.
    const page = { page: 0, lastKey: `${location}\u{1F600}`, count: 2, bytes: 4 };

    expect(isInPage({ key: `${location}\uE000x`, size: 2 }, page)).toBe(true);
    expect(isInPage({ key: `${location}\u{1F601}`, size: 2 }, page)).toBe(false);
  });

  it('agrees with compareKeys for any keys', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        const page = { page: 0, lastKey: b, count: 1, bytes: 1 };
        expect(isInPage({ key: a, size: 1 }, page)).toBe(compareKeys(a, b) <= 0);
      }),
    );
  });
});

describe('listPageAgain, a versioned page', () => {
  it("lists on while a late version keeps its last key's last version out of a listing", async () => {
    // Prepare: the page was [a v1, c v2, c v1] (c's versions newest first); since, a new
    // version of c landed, so a listing of 3 ends at c v2.
    const s3 = mockClient(S3Client);
    const [a, c, d] = [`${day(1)}a`, `${day(1)}c`, `${day(1)}d`];
    const version = (Key: string, VersionId: string) => ({ Key, VersionId, Size: 2 });
    s3.on(ListObjectVersionsCommand)
      .resolvesOnce({
        Versions: [version(a, 'v1'), version(c, 'v3'), version(c, 'v2')],
        IsTruncated: true,
        NextKeyMarker: c,
        NextVersionIdMarker: 'v2',
      })
      .resolvesOnce({ Versions: [version(c, 'v1'), version(d, 'v1')], IsTruncated: true });
    const chain = { bucket: 'b', prefix: day(1), versioned: true };
    const page = { page: 0, lastKey: c, lastKeyVersions: ['v2', 'v1'], count: 3, bytes: 6 };

    // Act
    const client = new S3Client({
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    const objects = await listPageAgain(client, chain, page, 3).finally(() => s3.restore());

    // Assess: the second listing starts after c v2 and brings c v1, the page's last entry
    expect(objects.map((entry) => `${entry.key.slice(-1)} ${entry.versionId}`)).toEqual([
      'a v1',
      'c v3',
      'c v2',
      'c v1',
      'd v1',
    ]);
    const calls = s3.commandCalls(ListObjectVersionsCommand).map((call) => call.args[0].input);
    expect(calls).toHaveLength(2);
    expect(calls[1]).toMatchObject({ KeyMarker: c, VersionIdMarker: 'v2' });
  });
});

describe('leftOfPage, a range chain whose earlier attempt only laid delete markers', () => {
  it("counts as hidden only its own keys, not the chain before's that sort just before its range", async () => {
    // Prepare: a chain over [loc/b/, ...); its page 0 held b/1 and b/2, listed at `at`. The
    // bucket turned versioned: the earlier attempt's delete of b/1 laid a marker, and the chain
    // before (over loc/b.json) laid one over its own key, which sorts between loc/b and loc/b/.
    const s3 = mockClient(S3Client);
    const at = Date.parse('2026-03-01T12:00:00.000Z');
    const chain = {
      bucket: 'b',
      prefix: location,
      range: { from: `${location}b/` },
      versioned: false,
    };
    const page = { page: 0, lastKey: `${location}b/2.json`, count: 2, bytes: 20, listedAt: at };
    s3.on(ListObjectVersionsCommand).resolves({
      Versions: [
        { Key: `${location}b.json`, VersionId: 'v1', Size: 5, IsLatest: false },
        { Key: `${location}b/1.json`, VersionId: 'null', Size: 10, IsLatest: false },
        { Key: `${location}b/2.json`, VersionId: 'null', Size: 10, IsLatest: true },
      ],
      DeleteMarkers: [
        {
          Key: `${location}b.json`,
          VersionId: 'm1',
          IsLatest: true,
          LastModified: new Date(at + 2000),
        },
        {
          Key: `${location}b/1.json`,
          VersionId: 'm2',
          IsLatest: true,
          LastModified: new Date(at + 1500),
        },
      ],
      IsTruncated: false,
    });
    const client = new S3Client({
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });

    // Act: b/2 is left of the page
    const left = await leftOfPage(client, chain, page, [
      { key: `${location}b/2.json`, size: 10 },
    ]).finally(() => s3.restore());

    // Assess: b/1 alone was hidden (the versioned round deletes and counts it): b/2 counts
    expect(left.page).toMatchObject({ count: 1, bytes: 10 });
  });
});

describe('listPageAgain over empty truncated pages', () => {
  it('lists on past a long run of empty pages to the keys of the page', async () => {
    // Prepare: S3 answers 25 empty truncated pages (behind delete markers), then the page's keys.
    const s3 = mockClient(S3Client);
    const [a, b] = [`${day(1)}a`, `${day(1)}b`];
    s3.on(ListObjectsV2Command).callsFake((input: { ContinuationToken?: string }) => {
      const at = input.ContinuationToken ? Number(input.ContinuationToken.slice(1)) : 0;
      if (at < 25) return { KeyCount: 0, IsTruncated: true, NextContinuationToken: `t${at + 1}` };
      return {
        Contents: [
          { Key: a, Size: 2 },
          { Key: b, Size: 2 },
        ],
        IsTruncated: false,
      };
    });
    const chain = { bucket: 'b', prefix: day(1), versioned: false };
    const page = { page: 1, after: { key: `${day(1)}0` }, lastKey: b, count: 2, bytes: 4 };

    // Act
    const client = new S3Client({
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    });
    const objects = await listPageAgain(client, chain, page, 3).finally(() => s3.restore());

    // Assess
    expect(objects.map((entry) => entry.key)).toEqual([a, b]);
    expect(s3.commandCalls(ListObjectsV2Command)).toHaveLength(26);
  });
});
