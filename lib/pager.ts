import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';

export interface ListedObject {
  key: string;
  size: number;
  /** In a versioned bucket: the version to delete. */
  versionId?: string;
  /** In a versioned bucket: a delete marker (removed, but not an object of the stream). */
  marker?: boolean;
}

export interface Page {
  objects: ListedObject[];
  /** Child prefixes, when listed with a delimiter. */
  prefixes: string[];
  /** True when more keys follow this page. */
  truncated: boolean;
  /** The key to start after for the next page. */
  lastKey?: string;
}

export interface PagerConfiguration {
  client: S3Client;
  /** Keys per page, at most 1,000 (S3's own limit). */
  pageSize?: number;
}

export interface PagerInput {
  Bucket: string;
  Prefix: string;
  StartAfter?: string;
  Delimiter?: string;
}

/**
 * Pages through a prefix with `StartAfter` rather than continuation tokens, so that any page
 * can be resumed from a key that was written down. Shaped like the SDK's own paginators.
 */
export async function* paginatePages(
  { client, pageSize = 1000 }: PagerConfiguration,
  input: PagerInput,
): AsyncGenerator<Page> {
  let startAfter = input.StartAfter;
  let continuationToken: string | undefined;
  for (;;) {
    const response = await client.send(
      new ListObjectsV2Command({
        Bucket: input.Bucket,
        Prefix: input.Prefix,
        MaxKeys: Math.min(pageSize, 1000),
        ...(input.Delimiter ? { Delimiter: input.Delimiter } : {}),
        // With a delimiter, a StartAfter inside a rolled-up prefix would roll it up again:
        // those listings (a few per deletion) page with the continuation token instead.
        ...(continuationToken
          ? { ContinuationToken: continuationToken }
          : startAfter
            ? { StartAfter: startAfter }
            : {}),
      }),
    );
    const objects = (response.Contents ?? []).map((object) => ({
      key: object.Key ?? '',
      size: object.Size ?? 0,
    }));
    const prefixes = (response.CommonPrefixes ?? []).map((entry) => entry.Prefix ?? '');
    const truncated = response.IsTruncated === true;
    const lastKey = objects.at(-1)?.key ?? startAfter;
    yield { objects, prefixes, truncated, ...(lastKey ? { lastKey } : {}) };
    if (!truncated) return;
    if (input.Delimiter) continuationToken = response.NextContinuationToken;
    else startAfter = lastKey;
  }
}

/** The first page only: what one worker lists for one message. */
export async function firstPage(configuration: PagerConfiguration, input: PagerInput) {
  for await (const page of paginatePages(configuration, input)) return page;
  throw new Error('unreachable: a listing yields at least one page');
}
