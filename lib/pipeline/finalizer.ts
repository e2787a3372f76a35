import {
  type ChainRecord,
  type Clock,
  canDeletion,
  type DeletionRecord,
  type DeletionRef,
  type FailureReason,
  finalizeMessage,
  hasIngestInFlight,
  isInScope,
  type PageRecord,
  scopeOf,
  secondsBetween,
  totalsOf,
} from '../core/index.ts';
import { abortAll, isRefusal, type Leftovers, uploadsUnder, whatIsLeftOf } from '../s3/index.ts';
import { failpoint } from '../support/index.ts';
import { closeOpenPage } from './page-counts.ts';
import type {
  Chains,
  DeletionEvents,
  Deletions,
  ObjectStore,
  Streams,
  Uploads,
  WorkSender,
} from './ports.ts';

export interface FinalizerOptions {
  readonly deletions: Deletions<
    'claimVerification' | 'complete' | 'fail' | 'nextRound' | 'heartbeat'
  >;
  readonly chains: Chains<'settle' | 'totals' | 'all' | 'completePage' | 'stop'>;
  readonly streams: Streams<'find'>;
  readonly uploads: Uploads<'record' | 'aborted' | 'count'>;
  readonly s3: ObjectStore;
  readonly queue: WorkSender;
  readonly events: DeletionEvents;
  /**
   * The longest an admitted ingest may take to land its object. Verification waits for
   * ingests still in flight, but never longer than this after the last one was admitted.
   */
  readonly ingestGraceSeconds: number;
  /** Rounds of listing a location afresh before giving up on it ever being empty. */
  readonly maxRounds?: number;
  /** Seconds between marks of progress while it waits for an ingest (the fence's). @default 60 */
  readonly heartbeatSeconds?: number;
  readonly clock: Clock;
}

/** Seconds between looks at an ingest that was still in flight when a round ended. */
const RECHECK_SECONDS = 2;

export type FinalizeOutcome =
  | 'not-ready'
  | 'delayed'
  | 'completed'
  | 'failed'
  | 'next-round'
  | 'claimed'
  | 'fenced';

/** True when every chain of the round has ended and every listed page is counted. */
export const isReadyToVerify = (deletion: DeletionRecord) =>
  canDeletion('verify', deletion.state) && deletion.chainsSettled >= deletion.chainsTotal;

/**
 * The rounds of the deletion's latest run: since its request, or since its last retry (an
 * operator retries once the cause is fixed, and the retry gets every round a request gets).
 */
const roundsRun = (deletion: DeletionRecord) => deletion.round - (deletion.retriedAtRound ?? 0);

/** True when a chain has listed its last page and counted every page it listed. */
const hasEnded = (chain: ChainRecord) => chain.ended && Object.keys(chain.open ?? {}).length === 0;

/**
 * Settle, verify, finish: a deletion is COMPLETED only when a listing of its whole location
 * comes back empty. Leftovers (keys beside the child prefixes, late writes) start another
 * round; keys that could not be deleted end it as FAILED. Every end of a deletion goes
 * through here, so it is reported once.
 */
export class Finalizer {
  readonly #deletions: FinalizerOptions['deletions'];
  readonly #chains: FinalizerOptions['chains'];
  readonly #streams: FinalizerOptions['streams'];
  readonly #uploads: FinalizerOptions['uploads'];
  readonly #s3: ObjectStore;
  readonly #queue: WorkSender;
  readonly #events: DeletionEvents;
  readonly #graceMs: number;
  readonly #maxRounds: number;
  readonly #heartbeatMs: number;
  readonly #clock: Clock;

  constructor(options: FinalizerOptions) {
    this.#deletions = options.deletions;
    this.#chains = options.chains;
    this.#streams = options.streams;
    this.#uploads = options.uploads;
    this.#s3 = options.s3;
    this.#queue = options.queue;
    this.#events = options.events;
    this.#graceMs = options.ingestGraceSeconds * 1000;
    this.#maxRounds = options.maxRounds ?? 5;
    this.#heartbeatMs = (options.heartbeatSeconds ?? 60) * 1000;
    this.#clock = options.clock;
  }

  /**
   * A chain that has ended with no page open counts towards its round, once; if it was the
   * last of the round, the round is verified.
   */
  async settle(chain: ChainRecord): Promise<FinalizeOutcome> {
    if (!hasEnded(chain)) return 'not-ready';
    if (!chain.settled && (await this.#chains.settle(chain)).status === 'fenced') return 'fenced';
    return this.finalizeIfReady(chain, chain);
  }

  /**
   * Finalizes the deletion if its round is done, unless another worker has claimed that
   * already (the last chains of a round often settle together). The claim is conditional on
   * the round being done, so it reads the deletion too: one request either way.
   */
  async finalizeIfReady(ref: DeletionRef, settled?: ChainRecord): Promise<FinalizeOutcome> {
    const claimed = await this.#deletions.claimVerification(ref);
    if (claimed.status === 'ok') return this.finalize(claimed.item, settled);
    const current = claimed.current;
    if (!current || current.round !== ref.round) return 'fenced';
    return isReadyToVerify(current) ? 'claimed' : 'not-ready';
  }

  /** `settled`: the chain whose settling made the round ready, as that write left it. */
  async finalize(deletion: DeletionRecord, settled?: ChainRecord): Promise<FinalizeOutcome> {
    if (!isReadyToVerify(deletion)) return 'not-ready';
    const waitMs = await this.#ingestWait(deletion);
    if (waitMs > 0) {
      // Waiting is progress: without a mark, a grace longer than the sweeper's stale threshold
      // times its attempts would end the deletion Stalled. The wait is bounded by the grace.
      const now = this.#clock.now().getTime();
      await this.#deletions.heartbeat(deletion, new Date(now - this.#heartbeatMs));
      // Look again soon: the ingest usually lands long before the grace runs out.
      const delaySeconds = Math.min(waitMs / 1000, RECHECK_SECONDS);
      await this.#queue.send([finalizeMessage(deletion)], delaySeconds);
      return 'delayed';
    }
    failpoint('finalize.before-verify');
    const { left, recorded } = await this.#whatIsLeft(deletion);
    const verifiedAt = this.#clock.now().toISOString();
    // Uploads recorded just now count as the deletion's, which was read before they were.
    const seen: DeletionRecord = recorded ? { ...deletion, uploadsRecorded: true } : deletion;
    const final = await this.#totals(seen, settled);
    if (left.empty) {
      failpoint('finalize.after-verify');
      // A key refused once, deleted since (by a duplicate, say): a COMPLETED receipt names none.
      const done = await this.#deletions.complete({ ...final, failedObjects: 0, verifiedAt });
      if (done.status !== 'ok') return 'fenced';
      this.#ended({ ...final, failedObjects: 0, state: 'COMPLETED' });
      return 'completed';
    }
    if (final.failedObjects > 0) return this.#fail(final);
    if (left.versioned && !deletion.versioned) {
      // The bucket keeps versions after all: go again, version by version.
      const outcome = await this.#deletions.nextRound(deletion, true);
      return outcome.status === 'ok' ? 'next-round' : 'fenced';
    }
    const rounds = roundsRun(deletion);
    if (rounds >= this.#maxRounds) {
      return this.#fail(final, {
        code: 'LocationNotEmpty',
        message: `objects kept appearing under the location after ${rounds} rounds, e.g. ${left.key}`,
      });
    }
    return (await this.#deletions.nextRound(deletion)).status === 'ok' ? 'next-round' : 'fenced';
  }

  /**
   * Ends a deletion that stopped making progress (the sweeper's Stalled) as FAILED with its
   * totals so far. Its pages that were listed but never counted are closed first, each counting
   * what of it is gone: the attempt that died between a page's delete and its count deleted it,
   * and neither this receipt nor a retry's new round would count it otherwise.
   *
   * A straggler of the attempts given up (its fence learned "running" before) must not count
   * after the receipt, nor delete a page after the listing that closes it: each chain of the
   * round is stopped first (no worker takes or lists a page of it after), and one stopped with
   * pages open has them closed by the next verdict, a stale interval on (`delayed`), when no
   * worker that read it before its stop can still be deleting (the sweeper's own premise).
   */
  async fail(deletion: DeletionRecord, reason?: FailureReason): Promise<FinalizeOutcome> {
    const chains: ChainRecord[] = [];
    let stopping = false;
    for (const read of await this.#chains.all(deletion)) {
      const stop = read.round === deletion.round && !read.stopped;
      const stopped = stop ? await this.#chains.stop(read) : undefined;
      const chain = stopped?.status === 'ok' ? stopped.item : read;
      if (stop && Object.keys(chain.open ?? {}).length > 0) stopping = true;
      chains.push(chain);
    }
    if (stopping) return 'delayed';
    // This round's only: a page an earlier verdict could not list was counted by the rounds since.
    for (const chain of chains.filter((each) => each.round === deletion.round)) {
      for (const page of Object.values(chain.open ?? {})) await this.#close(chain, page);
    }
    return this.#fail(await this.#totals(deletion), reason);
  }

  /**
   * Closes a page that was listed and never counted, unless S3 refuses for good to list it (the
   * bucket is gone, or listing it is denied): what of it is gone cannot be told then, so it is
   * left open and uncounted, and the deletion still ends FAILED instead of staying RUNNING for
   * ever. An error that may pass is thrown: the next sweep tries again.
   */
  async #close(chain: ChainRecord, page: PageRecord): Promise<void> {
    try {
      await closeOpenPage(this.#s3, this.#chains, chain, page);
    } catch (error) {
      if (!isRefusal(error)) throw error;
    }
  }

  /**
   * The receipt's totals: every chain of every round, and every upload aborted. A first round
   * of one chain (a split counts a chain more) is that chain: when it is the one `settled`,
   * ended with no page open, its counts are final and the chains need not be read.
   */
  async #totals(deletion: DeletionRecord, settled?: ChainRecord): Promise<DeletionRecord> {
    const only =
      deletion.round === 1 && deletion.chainsTotal === 1 && settled?.round === 1 ? settled : null;
    const [chains, multipartUploadsAborted] = await Promise.all([
      only ? totalsOf([only], deletion.round) : this.#chains.totals(deletion),
      this.#uploads.count(deletion),
    ]);
    return { ...deletion, ...chains, multipartUploadsAborted };
  }

  /**
   * What is left of the deletion's scope: through versions (a versioned bucket keeps data a
   * listing of objects cannot see), then uploads in progress (invisible to both, and able to
   * complete into an emptied location). Uploads found are aborted and, if nothing else was
   * left, the scope is looked at again: an upload that completed meanwhile is an object now.
   * An empty location costs two listings. `recorded`: uploads were recorded to be aborted.
   */
  async #whatIsLeft(deletion: DeletionRecord): Promise<{ left: Leftovers; recorded: boolean }> {
    const left = await whatIsLeftOf(this.#s3, deletion.bucket, scopeOf(deletion));
    if (left.empty) return { left, recorded: false };
    const recorded = await this.#abortUploads(deletion);
    if (!left.upload) return { left, recorded };
    return { left: await whatIsLeftOf(this.#s3, deletion.bucket, scopeOf(deletion)), recorded };
  }

  /**
   * Aborts every upload in progress under the location, each recorded before and marked after
   * its abort: counted once, and not when it completed first. True if it recorded any.
   */
  async #abortUploads(deletion: DeletionRecord): Promise<boolean> {
    let recorded = false;
    for await (const uploads of uploadsUnder(this.#s3, deletion.bucket, deletion.prefix)) {
      const inside = uploads.filter((upload) => isInScope(upload.key, scopeOf(deletion)));
      if (inside.length === 0) continue;
      await this.#uploads.record(deletion, inside);
      recorded = true;
      await this.#uploads.aborted(deletion, await abortAll(this.#s3, deletion.bucket, inside));
    }
    return recorded;
  }

  async #fail(final: DeletionRecord, reason?: FailureReason): Promise<FinalizeOutcome> {
    if ((await this.#deletions.fail(final, reason)).status !== 'ok') return 'fenced';
    this.#ended({ ...final, state: 'FAILED' }, reason);
    return 'failed';
  }

  #ended(deletion: DeletionRecord, reason?: FailureReason) {
    this.#events.ended(deletion, secondsBetween(deletion.requestedAt, this.#clock.now()), reason);
  }

  /** Milliseconds until no ingest admitted before the tombstone can still be writing. */
  async #ingestWait(deletion: DeletionRecord): Promise<number> {
    if (deletion.before !== undefined) return this.#partitionIngestWait(deletion, deletion.before);
    if (deletion.ingestsSettled) return 0;
    const stream = await this.#streams.find(deletion.tenant, deletion.stream);
    if (stream?.deletionId !== deletion.deletionId || !hasIngestInFlight(stream)) return 0;
    const since = Date.parse(stream.lastIngestAt ?? deletion.requestedAt);
    return since + this.#graceMs - this.#clock.now().getTime();
  }

  /**
   * A partition deletion leaves its stream writable, and ingests go on into today's partition,
   * which it never takes (its `before` is today at the latest). But an ingest dates its key when
   * its write starts: one admitted before the cutoff's midnight may write the day before, in
   * scope, and land up to the grace later. Until then, an ingest in flight is waited for.
   */
  async #partitionIngestWait(deletion: DeletionRecord, before: string): Promise<number> {
    const waitMs =
      Date.parse(`${before}T00:00:00.000Z`) + this.#graceMs - this.#clock.now().getTime();
    if (waitMs <= 0) return 0;
    const stream = await this.#streams.find(deletion.tenant, deletion.stream);
    return stream?.generation === deletion.generation && hasIngestInFlight(stream) ? waitMs : 0;
  }
}
