// lib/s3: the S3 adapter. Listing (plain and versioned, one page shape), page deletion, what is left, event writing.
export {
  isBucketVersioned,
  isRefusal,
  type Leftovers,
  whatIsLeft,
  whatIsLeftOf,
} from './bucket.ts';
export { EventWriter, type EventWriterOptions } from './event-writer.ts';
export {
  childrenOf,
  decodeKey,
  firstPage,
  type ListingPage,
  type PagerConfiguration,
  type PagerInput,
  paginatePages,
  paginateVersionPages,
} from './listing.ts';
export { fitsXml, isTransientCode, PageDeleter, type PageResult } from './page-deleter.ts';
export { abortAll, abortUpload, type Upload, uploadsUnder } from './uploads.ts';
