import { PayloadTooLargeError, type StreamRecord, toReceipt, toStreamView } from '../core/index.ts';
import type { EventWriter } from '../s3/index.ts';
import type { DeletionStore, StreamStore } from '../store/index.ts';
import type { Receipts } from './receipts.ts';
import {
  accepted,
  eventsOf,
  graceOf,
  limitOf,
  type Operations,
  type Reply,
  streamOf,
  tenantOf,
} from './request.ts';

export interface StreamOperationsOptions {
  readonly streams: Pick<
    StreamStore,
    'create' | 'get' | 'list' | 'admitIngest' | 'releaseIngest' | 'abandonIngest'
  >;
  readonly deletions: Pick<DeletionStore, 'request'>;
  /** A repeated DELETE's deletion under way, with its exact totals. */
  readonly receipts: Pick<Receipts, 'of'>;
  readonly writer: Pick<EventWriter, 'write'>;
  /** Largest events body accepted, in bytes. */
  readonly maxEventsBytes: number;
  /** Seconds a deletion waits, cancellable, when its request names no window. */
  readonly defaultGraceSeconds: number;
}

const stream = (status: number, record: StreamRecord): Reply => ({
  status,
  body: toStreamView(record),
  subject: {
    generation: record.generation,
    ...(record.deletionId ? { deletionId: record.deletionId } : {}),
  },
});

/** The stream routes: create, read, list, ingest, delete. */
export function streamOperations(options: StreamOperationsOptions) {
  const { streams, deletions, receipts, writer, maxEventsBytes, defaultGraceSeconds } = options;
  return {
    listStreams: async (request) => {
      const page = await streams.list(tenantOf(request), limitOf(request), request.query.nextToken);
      return {
        status: 200,
        body: {
          streams: page.streams.map(toStreamView),
          ...(page.nextToken ? { nextToken: page.nextToken } : {}),
        },
      };
    },

    createStream: async (request) => {
      const created = await streams.create(tenantOf(request), streamOf(request));
      return stream(created.created ? 201 : 200, created.stream);
    },

    getStream: async (request) =>
      stream(200, await streams.get(tenantOf(request), streamOf(request))),

    deleteStream: async (request) => {
      const tenant = tenantOf(request);
      const name = streamOf(request);
      const grace = graceOf(request, defaultGraceSeconds);
      const { created, deletion } = await deletions.request(tenant, name, grace);
      // A repeat answers the deletion under way with its exact totals, as GET does.
      return accepted(tenant, created ? toReceipt(deletion) : await receipts.of(deletion));
    },

    ingestEvents: async (request) => {
      const tenant = tenantOf(request);
      const name = streamOf(request);
      if (request.body.length > maxEventsBytes) {
        throw new PayloadTooLargeError(`events body is larger than ${maxEventsBytes} bytes`);
      }
      // Checked, counted, and stored as they were sent.
      const events = eventsOf(request.body);
      const admitted = await streams.admitIngest(tenant, name);
      let key: string;
      try {
        key = await writer.write(admitted, request.body);
      } catch (error) {
        // S3 may yet store a write its client gave up on: a deletion waits for it as in flight.
        await streams.abandonIngest(admitted);
        throw error;
      }
      await streams.releaseIngest(admitted);
      return {
        status: 201,
        body: { key, count: events.length },
        subject: { generation: admitted.generation },
      };
    },
  } satisfies Operations<string>;
}
