import type { APIGatewayProxyResult } from 'aws-lambda';
import { createHttpApi, type Operation, Receipts, ROUTES } from '../../lib/api/index.ts';
import {
  BadRequestError,
  type CertificateKey,
  DeletionNotCancellableError,
  DeletionNotFoundError,
  DeletionNotRetryableError,
  DeletionNotScheduledError,
  type DeletionRecord,
  fenced,
  type KeyFailure,
  NO_COUNTS,
  newPlan,
  OffboardingNotFoundError,
  type OffboardingRecord,
  type OffboardingView,
  type Outcome,
  PartitionDeletionInProgressError,
  type PlanRecord,
  StreamDeletingError,
  StreamNotFoundError,
  type StreamRecord,
  TenantDeletingError,
} from '../../lib/core/index.ts';
import type {
  AdmittedIngest,
  CreateResult,
  DeletionPage,
  DeletionRequest,
  StreamPage,
} from '../../lib/store/index.ts';
import { apiEvent } from './events.ts';
import { aDeletion, aStream, DELETION_ID, NOW } from './records.ts';
import { localSigner } from './signer.ts';

/*
 * What each operation of the api can meet, to check the OpenAPI document against what the
 * handler actually answers.
 */

export const MAX_EVENTS_BYTES = 256;

/** What each store method the api reaches answers; an Error is thrown instead. */
interface Answers {
  create: CreateResult;
  get: StreamRecord;
  list: StreamPage;
  admitIngest: AdmittedIngest;
  request: DeletionRequest;
  retry: DeletionRecord;
  cancel: DeletionRecord;
  expedite: DeletionRecord;
  /** The deletion record a receipt is read from (`null`: there is none). */
  deletion: DeletionRecord | null;
  /** The key failures of a receipt. */
  failures: KeyFailure[];
  /** A page of the tenant's deletions. */
  deletions: DeletionPage;
  /** A public key that once signed certificates (`null`: no such key). */
  key: CertificateKey | null;
  /** A partition deletion's request. */
  requestPartitions: DeletionRequest;
  /** The stream a retention policy was written to. */
  setRetention: StreamRecord;
  /** The tenant's offboarding (`null`: it has none). */
  offboarding: OffboardingRecord | null;
  /** What cancelling it answers (`null`: it was not RUNNING in its window). */
  offboardingCancel: OffboardingRecord | null;
  /** The offboarding's view. */
  offboardingView: OffboardingView;
  /** Whether the plan's transaction found the stream still ACTIVE. */
  planRequest: Outcome<PlanRecord>;
  /** The plan record a plan is read from (`null`: there is none). */
  plan: PlanRecord | null;
}

export type Fault = { [K in keyof Answers]?: Answers[K] | Error };

/** The answer a fault names, or the answer of a store that succeeds. */
function answer<T>(override: T | Error | undefined, value: T): T {
  if (override instanceof Error) throw override;
  return override === undefined ? value : override;
}

/**
 * The api handler over stores that succeed, except where `fault` says what they answer. Its
 * receipts are the real ones, read from the deletion record, its chains and its failures.
 */
function handlerWith(fault: Fault = {}) {
  const receipts = new Receipts({
    deletions: {
      get: async () => answer(fault.deletion, aDeletion()) ?? undefined,
    },
    chains: {
      totals: async () => ({ objectsDeleted: 5, bytesDeleted: 50, failedObjects: 0 }),
    },
    failures: { list: async () => answer(fault.failures, []) },
    uploads: { count: async () => 0 },
  });
  return createHttpApi({
    streams: {
      create: async () => answer(fault.create, { created: true, stream: aStream() }),
      get: async () => answer(fault.get, aStream()),
      list: async () => answer(fault.list, { streams: [aStream()] }),
      admitIngest: async () => answer(fault.admitIngest, { ...aStream(), ingestId: 'ingest-1' }),
      // The api ends every admitted ingest once its write ends (ingests in flight are counted).
      releaseIngest: async () => {},
      abandonIngest: async () => {},
      refusal: (stream) => new StreamDeletingError(stream, 30, NOW),
      setRetention: async () => answer(fault.setRetention, aStream({ retentionDays: 30 })),
    },
    deletions: {
      request: async () =>
        answer(fault.request, { created: true, deletion: aDeletion({ state: 'PENDING' }) }),
      retry: async () =>
        answer(fault.retry, aDeletion({ state: 'PENDING', round: 2, attempts: 2 })),
      cancel: async () =>
        answer(
          fault.cancel,
          aDeletion({ state: 'CANCELLED', cancelledAt: '2026-03-01T11:10:00.000Z' }),
        ),
      expedite: async () => answer(fault.expedite, aDeletion({ state: 'PENDING' })),
      requestPartitions: async () =>
        answer(fault.requestPartitions, {
          created: true,
          deletion: aDeletion({ state: 'PENDING', before: '2026-02-01' }),
        }),
    },
    index: {
      list: async () =>
        answer(fault.deletions, {
          // One of them taken in by a tenant offboarding: its receipt names the offboarding.
          deletions: [
            aDeletion(),
            aDeletion({ offboardingId: 'c3d5e7f9-2b4c-4d6e-8f0a-1b2c3d4e5f6a' }),
          ],
        }),
    },
    receipts,
    writer: { write: async () => 'streams/acme/logs/1/dt=2026-03-01/e.json' },
    maxEventsBytes: MAX_EVENTS_BYTES,
    defaultGraceSeconds: 0,
    plans: {
      request: async (plan) => answer(fault.planRequest, { status: 'ok', item: plan }),
      get: async () => answer(fault.plan, A_PLAN) ?? undefined,
      totals: async () => ({ ...NO_COUNTS, objects: 3, versions: 3, bytes: 30, pages: 1 }),
    },
    pageSize: 1000,
    workerConcurrency: 20,
    offboardings: {
      get: async () => answer(fault.offboarding, null) ?? undefined,
      request: async () => ({ created: true, offboarding: AN_OFFBOARDING }),
      cancel: async () =>
        answer(fault.offboardingCancel, { ...AN_OFFBOARDING, state: 'CANCELLED' }) ?? undefined,
    },
    offboarder: {
      view: async () => answer(fault.offboardingView, AN_OFFBOARDING_VIEW),
      refresh: async () => 'cancelled',
    },
    signer: SIGNER,
    keys: { get: async () => answer(fault.key, OLD_KEY) ?? undefined },
  });
}

const SIGNER = localSigner();
const AN_OFFBOARDING: OffboardingRecord = {
  type: 'OFFBOARDING',
  tenant: 'acme',
  offboardingId: 'c3d5e7f9-2b4c-4d6e-8f0a-1b2c3d4e5f6a',
  state: 'RUNNING',
  requestedAt: NOW.toISOString(),
  executeAfter: new Date(NOW.getTime() + 86_400_000).toISOString(),
  updatedAt: NOW.toISOString(),
  fannedOut: false,
  streams: 0,
};
const AN_OFFBOARDING_VIEW: OffboardingView = {
  tenant: 'acme',
  offboardingId: AN_OFFBOARDING.offboardingId,
  state: 'SCHEDULED',
  deletions: [DELETION_ID],
  streams: 1,
  deletionStates: { SCHEDULED: 1 },
  objectsDeleted: 0,
  bytesDeleted: 0,
  requestedAt: AN_OFFBOARDING.requestedAt,
  executeAfter: AN_OFFBOARDING.executeAfter,
};
const A_PLAN = {
  ...newPlan(aStream(), 'b2c4e6f8-1a3b-4c5d-8e9f-0a1b2c3d4e5f', NOW, {
    pageSize: 1000,
    workerConcurrency: 20,
  }),
  state: 'RUNNING' as const,
  chainsTotal: 2,
};
/** A key that signed certificates before the current one replaced it. */
const OLD_KEY = localSigner('arn:aws:kms:eu-west-1:000000000000:key/old-key').key;

const completed = aDeletion({
  state: 'COMPLETED',
  objectsDeleted: 10,
  bytesDeleted: 100,
  completedAt: '2026-03-01T11:05:00.000Z',
  verifiedAt: '2026-03-01T11:05:00.000Z',
});

export interface Case {
  label: string;
  params?: Record<string, string>;
  query?: Record<string, string>;
  body?: string;
  fault?: Fault;
}

const boom = new Error('boom');
/** Every store the api reaches fails: a bug's 500 on every operation but health. */
export const everythingFails: Fault = {
  create: boom,
  get: boom,
  list: boom,
  admitIngest: boom,
  request: boom,
  retry: boom,
  cancel: boom,
  expedite: boom,
  deletion: boom,
  deletions: boom,
  key: boom,
  plan: boom,
  planRequest: boom,
  requestPartitions: boom,
  setRetention: boom,
  offboarding: boom,
  offboardingCancel: boom,
  offboardingView: boom,
};

const scheduled = aDeletion({
  state: 'SCHEDULED',
  executeAfter: new Date(NOW.getTime() + 3_600_000).toISOString(),
});

/** Per operation: its successes, and each failure the real stores can raise. */
export const CASES: Record<Operation, Case[]> = {
  health: [{ label: 'ok' }],
  listStreams: [
    { label: 'one page' },
    { label: 'a page with more', fault: { list: { streams: [aStream()], nextToken: 'abc' } } },
    { label: 'an empty tenant', fault: { list: { streams: [] } } },
    { label: 'limit 0', query: { limit: '0' } },
    {
      label: 'a bad token',
      query: { nextToken: 'x' },
      fault: { list: new BadRequestError('InvalidNextToken', 'nextToken is not valid') },
    },
  ],
  createStream: [
    { label: 'new' },
    { label: 'already ACTIVE', fault: { create: { created: false, stream: aStream() } } },
    {
      label: 'being deleted',
      fault: {
        create: new StreamDeletingError(
          { tenant: 'acme', stream: 'logs', deletionId: DELETION_ID },
          30,
          NOW,
        ),
      },
    },
    {
      label: 'its tenant being offboarded',
      fault: { create: new TenantDeletingError('acme', AN_OFFBOARDING.offboardingId) },
    },
  ],
  getStream: [
    { label: 'ACTIVE' },
    {
      label: 'DELETING',
      fault: { get: aStream({ state: 'DELETING', deletionId: DELETION_ID }) },
    },
    { label: 'missing', fault: { get: new StreamNotFoundError('acme', 'logs') } },
  ],
  deleteStream: [
    { label: 'accepted' },
    {
      label: 'scheduled, with a grace window',
      query: { graceSeconds: '3600' },
      fault: { request: { created: true, deletion: scheduled } },
    },
    { label: 'a grace window too long', query: { graceSeconds: '2592001' } },
    {
      label: 'a repeat while it runs',
      fault: { request: { created: false, deletion: aDeletion({ objectsDeleted: 5 }) } },
    },
    { label: 'missing', fault: { request: new StreamNotFoundError('acme', 'logs') } },
    {
      label: 'a partition deletion under way',
      fault: {
        request: new PartitionDeletionInProgressError('acme/logs', DELETION_ID, '2026-01-15'),
      },
    },
    {
      label: 'deleting by a deletion that cannot be read',
      fault: {
        request: new StreamDeletingError(
          { tenant: 'acme', stream: 'logs', deletionId: DELETION_ID },
          30,
          NOW,
        ),
      },
    },
  ],
  ingestEvents: [
    { label: 'a batch', body: '[{"level":"info"},{"level":"warn"}]' },
    { label: 'bad JSON', body: '[{' },
    { label: 'an object', body: '{"level":"info"}' },
    { label: 'an empty array', body: '[]' },
    { label: 'nested too deeply', body: `${'['.repeat(101)}${']'.repeat(101)}` },
    { label: 'too large', body: JSON.stringify(['x'.repeat(MAX_EVENTS_BYTES)]) },
    {
      label: 'a missing stream',
      body: '[1]',
      fault: { admitIngest: new StreamNotFoundError('acme', 'logs') },
    },
    {
      label: 'a stream being deleted',
      body: '[1]',
      fault: {
        admitIngest: new StreamDeletingError(
          { tenant: 'acme', stream: 'logs', deletionId: DELETION_ID },
          30,
          NOW,
        ),
      },
    },
  ],
  listDeletions: [
    { label: 'one page' },
    {
      label: 'a page with more, of one state',
      query: { state: 'RUNNING' },
      fault: { deletions: { deletions: [aDeletion()], nextToken: 'abc' } },
    },
    { label: 'a tenant without deletions', fault: { deletions: { deletions: [] } } },
    { label: 'an unknown state', query: { state: 'DONE' } },
    { label: 'limit 101', query: { limit: '101' } },
    {
      label: 'a bad token',
      query: { nextToken: 'x' },
      fault: { deletions: new BadRequestError('InvalidNextToken', 'nextToken is not valid') },
    },
  ],
  getDeletion: [
    { label: 'RUNNING' },
    { label: 'SCHEDULED', fault: { deletion: scheduled } },
    {
      label: 'COMPLETED',
      fault: {
        deletion: aDeletion({
          state: 'COMPLETED',
          objectsDeleted: 10,
          bytesDeleted: 100,
          completedAt: '2026-03-01T11:05:00.000Z',
        }),
      },
    },
    {
      label: 'FAILED with keys',
      fault: {
        deletion: aDeletion({ state: 'FAILED', failedObjects: 1 }),
        failures: [
          { key: 'streams/acme/logs/1/a', code: 'AccessDenied', message: 'Access Denied' },
        ],
      },
    },
    {
      label: 'FAILED, stalled',
      fault: {
        deletion: aDeletion({
          state: 'FAILED',
          reason: { code: 'Stalled', message: 'no progress' },
        }),
      },
    },
    { label: 'missing', fault: { deletion: null } },
    { label: 'a bad id', params: { deletionId: 'not-a-uuid' } },
  ],
  cancelDeletion: [
    { label: 'cancelled' },
    { label: 'missing', fault: { cancel: new DeletionNotFoundError('acme', DELETION_ID) } },
    {
      label: 'already running',
      fault: { cancel: new DeletionNotCancellableError(DELETION_ID, 'RUNNING') },
    },
    { label: 'a bad id', params: { deletionId: 'not-a-uuid' } },
  ],
  expediteDeletion: [
    { label: 'started now' },
    { label: 'missing', fault: { expedite: new DeletionNotFoundError('acme', DELETION_ID) } },
    {
      label: 'already running',
      fault: { expedite: new DeletionNotScheduledError(DELETION_ID, 'RUNNING') },
    },
    { label: 'a bad id', params: { deletionId: 'not-a-uuid' } },
  ],
  retryDeletion: [
    { label: 'restarted' },
    { label: 'missing', fault: { retry: new DeletionNotFoundError('acme', DELETION_ID) } },
    {
      label: 'completed',
      fault: {
        retry: new DeletionNotRetryableError(`deletion ${DELETION_ID} has already completed`),
      },
    },
    { label: 'a bad id', params: { deletionId: 'NOT-A-UUID' } },
  ],
  deleteTenant: [
    { label: 'accepted' },
    { label: 'accepted, with a grace window', query: { graceSeconds: '86400' } },
    { label: 'a repeat while it runs', fault: { offboarding: AN_OFFBOARDING } },
    { label: 'a tenant without streams', fault: { list: { streams: [] } } },
    { label: 'a grace window too long', query: { graceSeconds: '99999999' } },
  ],
  getOffboarding: [
    { label: 'scheduled' },
    {
      label: 'completed',
      fault: {
        offboardingView: {
          ...AN_OFFBOARDING_VIEW,
          state: 'COMPLETED',
          deletionStates: { COMPLETED: 1 },
          objectsDeleted: 12,
          bytesDeleted: 1200,
          completedAt: NOW.toISOString(),
        },
      },
    },
    {
      label: 'none',
      fault: { offboardingView: new OffboardingNotFoundError('acme') },
    },
  ],
  cancelOffboarding: [
    { label: 'cancelled' },
    { label: 'none', fault: { offboardingCancel: null } },
    {
      label: 'its window is over',
      fault: { offboardingCancel: null, offboarding: AN_OFFBOARDING },
    },
  ],
  deletePartitions: [
    { label: 'accepted', query: { before: '2026-02-01' } },
    { label: 'no cutoff' },
    { label: 'a cutoff that is not a day', query: { before: '2026-02-30' } },
    { label: 'a cutoff after today', query: { before: '2999-01-01' } },
    {
      label: 'missing',
      query: { before: '2026-02-01' },
      fault: { requestPartitions: new StreamNotFoundError('acme', 'logs') },
    },
    {
      label: 'being deleted',
      query: { before: '2026-02-01' },
      fault: {
        requestPartitions: new StreamDeletingError(
          { tenant: 'acme', stream: 'logs', deletionId: DELETION_ID },
          30,
          NOW,
        ),
      },
    },
    {
      label: 'another cutoff under way',
      query: { before: '2026-02-01' },
      fault: {
        requestPartitions: new PartitionDeletionInProgressError(
          'acme/logs',
          DELETION_ID,
          '2026-01-15',
        ),
      },
    },
  ],
  putRetention: [
    { label: 'set', body: '{"days":30}' },
    { label: 'zero days', body: '{"days":0}' },
    { label: 'not JSON', body: 'thirty' },
    {
      label: 'missing',
      body: '{"days":30}',
      fault: { setRetention: new StreamNotFoundError('acme', 'logs') },
    },
    {
      label: 'being deleted',
      body: '{"days":30}',
      fault: {
        setRetention: new StreamDeletingError(
          { tenant: 'acme', stream: 'logs', deletionId: DELETION_ID },
          30,
          NOW,
        ),
      },
    },
  ],
  deleteRetention: [
    { label: 'removed', fault: { setRetention: aStream() } },
    { label: 'missing', fault: { setRetention: new StreamNotFoundError('acme', 'logs') } },
    {
      label: 'being deleted',
      fault: {
        setRetention: new StreamDeletingError(
          { tenant: 'acme', stream: 'logs', deletionId: DELETION_ID },
          30,
          NOW,
        ),
      },
    },
  ],
  createPlan: [
    { label: 'accepted' },
    { label: 'missing', fault: { get: new StreamNotFoundError('acme', 'logs') } },
    {
      label: 'being deleted',
      fault: { get: aStream({ state: 'DELETING', deletionId: DELETION_ID }) },
    },
    { label: 'deleted while it was requested', fault: { planRequest: fenced() } },
  ],
  getPlan: [
    { label: 'RUNNING' },
    {
      label: 'COMPLETED',
      fault: {
        plan: {
          ...A_PLAN,
          state: 'COMPLETED',
          objects: 2_400,
          versions: 2_400,
          bytes: 98_000,
          pages: 12,
          multipartUploads: 1,
          completedAt: NOW.toISOString(),
        },
      },
    },
    { label: 'missing', fault: { plan: null } },
    { label: 'a bad id', params: { planId: 'NOT-A-UUID' } },
  ],
  getCertificate: [
    { label: 'COMPLETED', fault: { deletion: completed } },
    { label: 'RUNNING' },
    { label: 'missing', fault: { deletion: null } },
    { label: 'a bad id', params: { deletionId: 'NOT-A-UUID' } },
  ],
  getCertificateKey: [
    { label: 'the current key' },
    { label: 'the current key by id', query: { keyId: SIGNER.key.keyId } },
    { label: 'a replaced key', query: { keyId: OLD_KEY.keyId } },
    { label: 'a key that never signed', query: { keyId: 'nope' }, fault: { key: null } },
    { label: 'an empty keyId', query: { keyId: '' } },
  ],
};

/** Calls the api handler for one case of an operation, with valid names unless it says otherwise. */
export async function invoke(operation: Operation, testCase: Case): Promise<APIGatewayProxyResult> {
  const route = ROUTES.find((candidate) => candidate.operation === operation);
  if (!route) throw new Error(`no route ${operation}`);
  const names = [...route.resource.matchAll(/\{(\w+)\}/g)].map((match) => match[1] ?? '');
  const defaults: Record<string, string> = {
    tenant: 'acme',
    stream: 'logs',
    deletionId: DELETION_ID,
    planId: A_PLAN.planId,
  };
  const pathParameters = Object.fromEntries(
    names.map((name) => [name, testCase.params?.[name] ?? defaults[name] ?? '']),
  );
  const { response } = await handlerWith(testCase.fault)(
    apiEvent({
      method: route.method,
      resource: route.resource,
      ...(names.length > 0 ? { pathParameters } : {}),
      ...(testCase.query ? { query: testCase.query } : {}),
      ...(testCase.body !== undefined ? { body: testCase.body } : {}),
    }),
  );
  return response;
}

/** The name-shaped path parameters of an operation, each broken in turn. */
export function invalidNameCases(operation: Operation): Case[] {
  const route = ROUTES.find((candidate) => candidate.operation === operation);
  return ['tenant', 'stream']
    .filter((name) => route?.resource.includes(`{${name}}`))
    .map((name) => ({
      label: `an invalid ${name} name`,
      params: { [name]: 'Not_Valid' },
      body: '[1]',
    }));
}
