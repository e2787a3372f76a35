import { type DeletionReceipt, type PlanView, verifyCertificate } from '../core/index.ts';
import { ApiError, type LetheClient } from './client.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import { waitForOffboarding } from './offboarding-wait.ts';
import { waitForPlan } from './plans.ts';
import { formatBytes, formatDuration, plural } from './progress.ts';
import { parseSavedCertificate } from './saved-certificate.ts';
import { waitForDeletion } from './wait.ts';

/** What the smoke test calls of the API. */
export type SmokeClient = Pick<
  LetheClient,
  | 'endpoint'
  | 'health'
  | 'createStream'
  | 'getStream'
  | 'listStreams'
  | 'ingest'
  | 'createPlan'
  | 'getPlan'
  | 'deleteStream'
  | 'cancelDeletion'
  | 'getDeletion'
  | 'getCertificate'
  | 'getCertificateKey'
  | 'deleteTenant'
  | 'getOffboarding'
>;

/** The grace window of the deletion the smoke test cancels: ample time to cancel it. */
const SMOKE_GRACE_SECONDS = 300;

/**
 * The longest a plan, a deletion or an offboarding of a few objects is waited for: a stalled
 * one would otherwise hold the run until the sweeper fails it, many minutes later.
 */
const SMOKE_WAIT_LIMIT_MS = 10 * 60_000;

/** The batches ingested, one object each: 1, 2 and 3 events. */
const BATCHES = [1, 2, 3];

/** What the scenario has done so far: what it checks against, and what it would leave behind. */
export interface SmokeState {
  readonly client: SmokeClient;
  readonly tenant: string;
  readonly stream: string;
  readonly intervalMs: number;
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Milliseconds since some fixed point: how long a wait has lasted. */
  readonly now: () => number;
  readonly wallNow: () => number;
  /** Aborted on Ctrl-C. */
  readonly signal?: AbortSignal | undefined;
  /** Called at every read of a wait, `what` waited for and for how long: a terminal's status. */
  waiting?: ((what: string, ms: number) => void) | undefined;
  created?: { generation: number; location: string };
  ingested: { objects: number; events: number };
  plan?: PlanView;
  /** The last receipt read of the deletion in hand (the scheduled one, then the real one). */
  deletion?: DeletionReceipt;
  /** The stream's deletion COMPLETED: nothing of its data is left. */
  deleted: boolean;
}

/** A check of the scenario that did not hold; `code` is what `lethe` exits with. */
export class SmokeCheckFailed extends Error {
  override readonly name = 'SmokeCheckFailed';
  constructor(
    message: string,
    readonly code: ExitCode = EXIT.smokeFailed,
  ) {
    super(message);
  }
}

/** Holds, or fails the step with `message`. */
function check(holds: boolean, message: string, code?: ExitCode): asserts holds {
  if (!holds) throw new SmokeCheckFailed(message, code);
}

/** One step: it does something and checks it, answering what held (one line). */
interface SmokeStep {
  readonly name: string;
  readonly run: (state: SmokeState) => Promise<string>;
}

const ref = (state: SmokeState) => `${state.tenant}/${state.stream}`;

/** The state's pacing, with a sleep that fails the step once `what` has lasted the limit. */
function bounded(state: SmokeState, what: string) {
  const start = state.now();
  const sleep = async (ms: number, signal?: AbortSignal) => {
    if (state.now() - start + ms > SMOKE_WAIT_LIMIT_MS) {
      throw new SmokeCheckFailed(
        `${what} has not ended after ${formatDuration(state.now() - start)}`,
      );
    }
    state.waiting?.(what, state.now() - start);
    await state.sleep(ms, signal);
  };
  return { ...state, sleep };
}

/** The scenario, in order. */
export const SMOKE_STEPS: readonly SmokeStep[] = [
  {
    name: 'health',
    run: async ({ client }) => {
      await client.health();
      return `the API answers {"status":"ok"}`;
    },
  },
  {
    name: 'create stream',
    run: async (state) => {
      const { status, body } = await state.client.createStream(state.tenant, state.stream);
      state.created = { generation: body.generation, location: body.location };
      check(status === 201, `${ref(state)} existed already (HTTP ${status}, not 201)`);
      check(body.state === 'ACTIVE', `${ref(state)} is ${body.state}, not ACTIVE`);
      return `${ref(state)} ACTIVE, generation ${body.generation}, at ${body.location}`;
    },
  },
  {
    name: 'ingest',
    run: async (state) => {
      const prefix = (state.created?.location ?? '').replace(/^s3:\/\/[^/]+\//, '');
      for (const [index, size] of BATCHES.entries()) {
        const events = Array.from({ length: size }, (_, seq) => ({
          smoke: true,
          batch: index,
          seq,
        }));
        const body = new TextEncoder().encode(JSON.stringify(events));
        const { key, count } = (await state.client.ingest(state.tenant, state.stream, body)).body;
        state.ingested.objects++;
        state.ingested.events += count;
        check(count === size, `batch ${index + 1} of ${size} events was stored as ${count}`);
        check(key.startsWith(prefix), `${key} is not under the stream's location ${prefix}`);
      }
      const { objects, events } = state.ingested;
      return `${plural(objects, 'object')} (${plural(events, 'event')}) stored under ${state.created?.location}`;
    },
  },
  {
    name: 'plan',
    run: async (state) => {
      const accepted = await state.client.createPlan(state.tenant, state.stream);
      const plan = await waitForPlan({
        ...bounded(state, `plan ${accepted.body.planId}`),
        plan: accepted.body,
      });
      state.plan = plan;
      check(
        plan.state === 'COMPLETED',
        `plan ${plan.planId} ended ${plan.state}${plan.failure ? `: ${plan.failure.code}: ${plan.failure.message}` : ''}`,
      );
      const { objects } = state.ingested;
      const counted = `${plural(plan.objects, 'object')}, ${plural(plan.versions, 'version')}, ${formatBytes(plan.bytes)}`;
      check(
        plan.objects === objects && plan.versions === objects,
        `plan ${plan.planId} counted ${counted}; ${plural(objects, 'object')} were stored`,
      );
      check(
        plan.deleteMarkers === 0 && plan.multipartUploads === 0,
        `plan ${plan.planId} counted ${plural(plan.deleteMarkers, 'delete marker')} and ${plural(plan.multipartUploads, 'upload')} in progress; none were made`,
      );
      return `COMPLETED: ${counted}, as stored`;
    },
  },
  {
    name: 'schedule deletion',
    run: async (state) => {
      const grace = SMOKE_GRACE_SECONDS;
      const { body } = await state.client.deleteStream(state.tenant, state.stream, grace);
      state.deletion = body;
      check(
        body.state === 'SCHEDULED',
        `deletion ${body.deletionId} with a ${grace}s grace window is ${body.state}, not SCHEDULED`,
      );
      return `deletion ${body.deletionId} SCHEDULED, to start in ${formatDuration(grace * 1000)} (${body.executeAfter})`;
    },
  },
  {
    name: 'cancel',
    run: async (state) => {
      const id = state.deletion?.deletionId ?? '';
      const { body } = await state.client.cancelDeletion(state.tenant, id);
      state.deletion = body;
      check(body.state === 'CANCELLED', `deletion ${id} is ${body.state} after its cancel`);
      check(
        body.objectsDeleted === 0 && body.bytesDeleted === 0,
        `cancelled deletion ${id} deleted ${plural(body.objectsDeleted, 'object')}`,
      );
      const stream = (await state.client.getStream(state.tenant, state.stream)).body;
      const generation = state.created?.generation;
      check(
        stream.state === 'ACTIVE' && stream.generation === generation,
        `${ref(state)} is ${stream.state}, generation ${stream.generation}, after the cancel (was ACTIVE, generation ${generation})`,
      );
      return `CANCELLED, nothing deleted; ${ref(state)} ACTIVE again, generation ${generation}`;
    },
  },
  {
    name: 'delete',
    run: async (state) => {
      const { body } = await state.client.deleteStream(state.tenant, state.stream, 0);
      state.deletion = body;
      check(
        body.state !== 'SCHEDULED' && body.state !== 'CANCELLED',
        `deletion ${body.deletionId} with no grace window is ${body.state}`,
      );
      return `deletion ${body.deletionId} ${body.state}, no grace window`;
    },
  },
  { name: 'wait', run: waitForCompletion },
  { name: 'certificate', run: verifyTheCertificate },
  { name: 'clean up', run: cleanUp },
];

/** Follows the deletion to its end, then checks that it deleted what the plan counted. */
async function waitForCompletion(state: SmokeState): Promise<string> {
  if (!state.deletion) throw new SmokeCheckFailed('no deletion to wait for');
  const first = state.deletion;
  const receipt = await waitForDeletion({
    ...bounded(state, `deletion ${first.deletionId}`),
    receipt: first,
    // Its state as last read, for what a run stopped here leaves behind.
    reporter: {
      update: ({ state: current }) => {
        state.deletion = { ...first, state: current as DeletionReceipt['state'] };
      },
      finish: () => {},
    },
  });
  state.deletion = receipt;
  const { deletionId } = receipt;
  if (receipt.state === 'FAILED') {
    const why = receipt.failures?.[0];
    const reason = why ? `: ${why.code}: ${why.message}` : '';
    throw new SmokeCheckFailed(`deletion ${deletionId} ended FAILED${reason}`, EXIT.deletionFailed);
  }
  check(
    receipt.state === 'COMPLETED',
    `deletion ${deletionId} ended ${receipt.state}`,
    EXIT.cancelled,
  );
  state.deleted = true;
  const plan = state.plan;
  const deleted = `${plural(receipt.objectsDeleted, 'object')}, ${formatBytes(receipt.bytesDeleted)}`;
  check(
    plan !== undefined &&
      receipt.objectsDeleted === plan.versions &&
      receipt.bytesDeleted === plan.bytes &&
      receipt.multipartUploadsAborted === plan.multipartUploads,
    `deletion ${deletionId} deleted ${deleted} and aborted ${plural(receipt.multipartUploadsAborted, 'upload')}; the plan counted ${plural(plan?.versions ?? 0, 'version')}, ${formatBytes(plan?.bytes ?? 0)} and ${plural(plan?.multipartUploads ?? 0, 'upload')}`,
  );
  return `COMPLETED: ${deleted} deleted, as the plan counted; verified empty at ${receipt.verifiedAt ?? receipt.completedAt}`;
}

/**
 * Fetches the certificate and the key the API publishes for its keyId, and checks the
 * signature here, as `lethe verify` does, and that it certifies what the receipt says.
 */
async function verifyTheCertificate(state: SmokeState): Promise<string> {
  const receipt = state.deletion;
  if (!receipt) throw new SmokeCheckFailed('no deletion to certify');
  const signed = (await state.client.getCertificate(state.tenant, receipt.deletionId)).body;
  const key = (await state.client.getCertificateKey(signed.keyId)).body;
  const invalid = EXIT.invalidCertificate;
  check(
    key.keyId === signed.keyId,
    `GET /v1/certificate-key?keyId=${signed.keyId} answered key ${key.keyId}`,
    invalid,
  );
  let document: unknown;
  try {
    ({ document } = parseSavedCertificate(JSON.stringify(signed), 'the certificate'));
  } catch (error) {
    throw new SmokeCheckFailed(error instanceof Error ? error.message : String(error), invalid);
  }
  check(
    verifyCertificate(document, key.publicKeyPem),
    `the certificate of deletion ${receipt.deletionId} does not verify against the key the API publishes for ${signed.keyId}`,
    invalid,
  );
  const { certificate } = signed;
  const differs = (
    ['deletionId', 'tenant', 'stream', 'location', 'objectsDeleted', 'bytesDeleted'] as const
  ).filter((field) => certificate[field] !== receipt[field]);
  check(
    differs.length === 0,
    `the certificate's ${differs.join(', ')} differ from the receipt's`,
    invalid,
  );
  return `valid: ${plural(certificate.objectsDeleted, 'object')} of ${ref(state)}, signed by ${signed.keyId}, checked here against GET /v1/certificate-key`;
}

/**
 * Offboards the smoke tenant with no grace window. With its one stream deleted, the API answers
 * TenantNotFound (no stream left): that is the check. Anything left is deleted and waited for.
 */
async function cleanUp(state: SmokeState): Promise<string> {
  let offboarded = '';
  try {
    const { body } = await state.client.deleteTenant(state.tenant, 0);
    const view = await waitForOffboarding({
      ...bounded(state, `the offboarding of tenant ${state.tenant}`),
      view: body,
    });
    check(
      view.state === 'COMPLETED',
      `the offboarding of tenant ${state.tenant} ended ${view.state}`,
    );
    offboarded = `offboarded tenant ${state.tenant}: ${plural(view.streams, 'stream')} deleted; `;
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'TenantNotFound') throw error;
  }
  const { streams } = (await state.client.listStreams(state.tenant)).body;
  check(
    streams.length === 0,
    `tenant ${state.tenant} still has ${plural(streams.length, 'stream')}: ${streams.map((s) => `${s.stream} (${s.state})`).join(', ')}`,
  );
  return `${offboarded}tenant ${state.tenant} has no stream left${offboarded ? '' : ' (offboarding it answers TenantNotFound)'}`;
}
