import {
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  type ListObjectsV2CommandInput,
  type ListObjectsV2CommandOutput,
  ListObjectVersionsCommand,
  type ListObjectVersionsCommandInput,
  type ListObjectVersionsCommandOutput,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Cursor } from '../../../lib/core/index.ts';
import { firstPage, whatIsLeft } from '../../../lib/s3/index.ts';
import { BUCKET } from '../../helpers/records.ts';

// S3 may answer a truncated page with no keys (behind many delete markers), many in a row.
const s3 = mockClient(S3Client);
const client = new S3Client({ region: 'us-east-1' });
const prefix = 'streams/acme/logs/1/';
const EMPTY_PAGES = 25;

beforeEach(() => {
  s3.reset();
});

/**
 * A plain listing as S3 shapes it: from the start (or after `a`), EMPTY_PAGES empty truncated
 * pages, each with a token that leads to the next, then the page with `z`.
 */
function plainListing() {
  s3.on(ListObjectsV2Command).callsFake(
    (input: ListObjectsV2CommandInput): Partial<ListObjectsV2CommandOutput> => {
      const at = input.ContinuationToken ? Number(input.ContinuationToken.slice(1)) : 0;
      if (at < EMPTY_PAGES) {
        return { KeyCount: 0, IsTruncated: true, NextContinuationToken: `t${at + 1}` };
      }
      return { KeyCount: 1, Contents: [{ Key: `${prefix}z`, Size: 5 }], IsTruncated: false };
    },
  );
}

/** The same in a versioned bucket: S3's markers name where each empty page stopped. */
function versionListing() {
  s3.on(ListObjectVersionsCommand).callsFake(
    (input: ListObjectVersionsCommandInput): Partial<ListObjectVersionsCommandOutput> => {
      const at = input.KeyMarker ? Number(input.KeyMarker.slice(prefix.length + 1)) : 0;
      if (at < EMPTY_PAGES) {
        const NextKeyMarker = `${prefix}m${String(at + 1).padStart(2, '0')}`;
        return { IsTruncated: true, NextKeyMarker, NextVersionIdMarker: 'v' };
      }
      return { Versions: [{ Key: `${prefix}z`, VersionId: 'v1', Size: 5 }], IsTruncated: false };
    },
  );
}

/** A chain's pages, one firstPage a message, as a worker lists them; at most `messages`. */
async function chainOf(versioned: boolean, after: Cursor | undefined, messages = 10) {
  const keys: string[] = [];
  let cursor = after;
  for (let message = 0; message < messages; message++) {
    const page = await firstPage(
      { client },
      { Bucket: BUCKET, Prefix: prefix, After: cursor },
      versioned,
    );
    keys.push(...page.objects.map((object) => object.key));
    if (!page.next) return { keys, ended: true, messages: message + 1 };
    cursor = page.next;
  }
  return { keys, ended: false, messages };
}

describe('firstPage over a long run of empty truncated pages', () => {
  it('moves a plain chain on by its token, message after message, to its keys and its end', async () => {
    plainListing();

    const chain = await chainOf(false, { key: `${prefix}a` });

    expect(chain).toEqual({ keys: [`${prefix}z`], ended: true, messages: 3 });
    const tokens = s3.commandCalls(ListObjectsV2Command).map((call) => call.args[0].input);
    // Every page is listed once: a message goes on from the token where the one before stopped.
    expect(tokens).toHaveLength(EMPTY_PAGES + 1);
    expect(tokens[11]).toMatchObject({ ContinuationToken: 't11' });
    expect(tokens[11]?.StartAfter).toBeUndefined();
  });

  it('hands on an empty page with its token and the key it went on from', async () => {
    plainListing();

    const page = await firstPage(
      { client },
      { Bucket: BUCKET, Prefix: prefix, After: { key: `${prefix}a` } },
      false,
    );

    expect(page).toEqual({ objects: [], prefixes: [], next: { key: `${prefix}a`, token: 't11' } });
  });

  it('bounds the pages one call lists from the start of a prefix too', async () => {
    plainListing();

    const page = await firstPage({ client }, { Bucket: BUCKET, Prefix: prefix }, false);

    // Ten empty pages skipped, the eleventh returned with where it goes on.
    expect(page.next).toEqual({ key: '', token: 't11' });
    expect(s3.commandCalls(ListObjectsV2Command)).toHaveLength(11);
  });

  it('moves a versioned chain on by S3 markers to its keys and its end', async () => {
    versionListing();

    const chain = await chainOf(true, undefined);

    expect(chain).toEqual({ keys: [`${prefix}z`], ended: true, messages: 3 });
    expect(s3.commandCalls(ListObjectVersionsCommand)).toHaveLength(EMPTY_PAGES + 1);
  });

  it('refuses a truncated plain page with no keys and no token to go on from', async () => {
    // Without the check a listing would ask for ever: the mock stops it after 50 asks.
    let asked = 0;
    s3.on(ListObjectsV2Command).callsFake(() => {
      if (++asked > 50) throw new Error('listed the same page for ever');
      return { KeyCount: 0, IsTruncated: true };
    });

    await expect(firstPage({ client }, { Bucket: BUCKET, Prefix: prefix }, false)).rejects.toThrow(
      /no keys and no token/,
    );
  });
});

describe('a written-down token S3 no longer takes', () => {
  const refused = new S3ServiceException({
    name: 'InvalidArgument',
    $fault: 'client',
    $metadata: { httpStatusCode: 400 },
    message: 'The continuation token provided is incorrect',
  });

  it('lists again from the key the token went on from', async () => {
    s3.on(ListObjectsV2Command)
      .rejects(refused)
      .on(ListObjectsV2Command, { StartAfter: `${prefix}a` })
      .resolves({ Contents: [{ Key: `${prefix}z`, Size: 5 }], IsTruncated: false });

    const page = await firstPage(
      { client },
      { Bucket: BUCKET, Prefix: prefix, After: { key: `${prefix}a`, token: 'old' } },
      false,
    );

    expect(page.objects).toEqual([{ key: `${prefix}z`, size: 5 }]);
    const asked = s3.commandCalls(ListObjectsV2Command).map((call) => call.args[0].input);
    expect(asked.map((input) => input.ContinuationToken ?? input.StartAfter)).toEqual([
      'old',
      `${prefix}a`,
    ]);
  });

  it('passes on any other refusal', async () => {
    s3.on(ListObjectsV2Command).rejects(
      new S3ServiceException({ name: 'AccessDenied', $fault: 'client', $metadata: {} }),
    );

    await expect(
      firstPage(
        { client },
        { Bucket: BUCKET, Prefix: prefix, After: { key: `${prefix}a`, token: 'old' } },
        false,
      ),
    ).rejects.toThrow(S3ServiceException);
    expect(s3.commandCalls(ListObjectsV2Command)).toHaveLength(1);
  });
});

describe('whatIsLeft behind empty truncated pages', () => {
  it('lists on past empty truncated pages to a version left', async () => {
    versionListing();
    s3.on(ListMultipartUploadsCommand).resolves({ IsTruncated: false });

    const left = await whatIsLeft(client, BUCKET, prefix);

    expect(left).toEqual({ empty: false, key: `${prefix}z`, versioned: true });
    const last = s3.commandCalls(ListObjectVersionsCommand).at(-1)?.args[0].input;
    expect(last).toMatchObject({ KeyMarker: `${prefix}m25`, VersionIdMarker: 'v', MaxKeys: 1 });
  });
});
