import {
  type Clock,
  DeletionNotCancellableError,
  DeletionNotFoundError,
  type DeletionRecord,
  type OffboardingLink,
  OffboardingNotFoundError,
  type OffboardingRecord,
  type OffboardingView,
  PartitionDeletionInProgressError,
  StreamNotFoundError,
  systemClock,
  toOffboardingView,
} from '../core/index.ts';
import {
  type DeletionRequest,
  type DeletionStore,
  type OffboardingStore,
  type StreamStore,
  TakenInAlreadyError,
} from '../store/index.ts';
import { isDone, isUncounted, type Linked, totalsOf } from './offboarding-links.ts';

export interface OffboarderOptions {
  readonly offboardings: Pick<
    OffboardingStore,
    | 'get'
    | 'link'
    | 'linkItems'
    | 'links'
    | 'relink'
    | 'relinkItems'
    | 'advance'
    | 'windowEnded'
    | 'complete'
    | 'settleCancel'
    | 'countCompleted'
    | 'completedCount'
  >;
  readonly streams: Pick<StreamStore, 'listAfter' | 'find'>;
  readonly deletions: Pick<DeletionStore, 'request' | 'getMany' | 'cancel'>;
  readonly clock?: Clock;
  /** Streams taken in per fan-out step. @default 100 */
  readonly pageSize?: number;
  /** A fan-out with no step for this long is taken on by the sweeper. @default 300 s */
  readonly staleAfterMs?: number;
}

/** A cancelled offboarding is settled once this long has passed with nothing left to cancel. */
const SETTLE_AFTER_MS = 120_000;

/**
 * A tenant's offboarding, driven by its own writes: each fan-out step takes one page of the
 * tenant's streams in (a deletion each, with the offboarding's grace window; a stream being
 * deleted already has its deletion adopted as it is, which a cancel leaves) and records how far
 * it got, and that write reaches the dispatcher as the next step. No invocation walks all of a
 * tenant's streams. Each of its deletions names it and is counted as it completes
 * (`deletionCompleted`, from the dispatcher), and the count reaching the streams taken in
 * completes the offboarding at once; the sweeper completes one whose count fell short (a stream
 * record that failed for good), writes the end of its grace window, and finishes cancelling one.
 */
export class Offboarder {
  readonly #offboardings: OffboarderOptions['offboardings'];
  readonly #streams: OffboarderOptions['streams'];
  readonly #deletions: OffboarderOptions['deletions'];
  readonly #clock: Clock;
  readonly #pageSize: number;
  readonly #staleAfterMs: number;

  constructor(options: OffboarderOptions) {
    this.#offboardings = options.offboardings;
    this.#streams = options.streams;
    this.#deletions = options.deletions;
    this.#clock = options.clock ?? systemClock;
    this.#pageSize = options.pageSize ?? 100;
    this.#staleAfterMs = options.staleAfterMs ?? 300_000;
  }

  /**
   * One fan-out step; a repeated or late one changes nothing. A stream whose partition
   * deletion is under way cannot be deleted yet: the step ends before it ('waiting'), and the
   * sweeper takes the fan-out on from that stream once it has been idle for the stale interval.
   */
  async fanOut(ref: {
    tenant: string;
    offboardingId: string;
  }): Promise<'advanced' | 'completed' | 'stale' | 'waiting'> {
    const seen = await this.#offboardings.get(ref.tenant);
    if (seen?.offboardingId !== ref.offboardingId || seen.state !== 'RUNNING' || seen.fannedOut) {
      return 'stale';
    }
    const page = await this.#streams.listAfter(seen.tenant, seen.fanoutAfter, this.#pageSize);
    const grace = this.#graceLeft(seen);
    let taken: string | undefined;
    for (const stream of page.streams) {
      // A new deletion is linked in its own tombstone's transaction; one under way already (a
      // stream being deleted) is adopted, once, after it (a repeated step's is linked already).
      let requested: DeletionRequest;
      try {
        requested = await this.#deletions.request(seen.tenant, stream.stream, grace, {
          offboardingId: seen.offboardingId,
          linkItems: (fresh) => this.#offboardings.linkItems(seen, stream.stream, fresh.deletionId),
        });
      } catch (error) {
        // Linked by an earlier run of this step (it died before recording how far it got), its
        // deletion cancelled since: linked and counted once, and taken in again by the sweeper.
        if (error instanceof TakenInAlreadyError) {
          taken = stream.stream;
          continue;
        }
        if (!(error instanceof PartitionDeletionInProgressError)) throw error;
        // Recorded up to the stream before it; nothing recorded when it is the first.
        if (taken !== undefined) await this.#offboardings.advance(seen, taken);
        return 'waiting';
      }
      const { created, deletion } = requested;
      if (!created) await this.#offboardings.link(seen, stream.stream, deletion.deletionId);
      taken = stream.stream;
    }
    // The write that records the step is the next step's trigger (or ends the fan-out).
    if (!(await this.#offboardings.advance(seen, page.lastRead))) return 'stale';
    // The last step: its deletions may all have completed while it took streams in.
    if (page.lastRead === undefined && (await this.#completeIfCounted(seen)) === 'completed') {
      return 'completed';
    }
    return 'advanced';
  }

  /**
   * A deletion it took in has COMPLETED: it is counted, once, and the offboarding completes
   * when that was the last one. A deletion it no longer links (taken in again) counts nothing.
   */
  async deletionCompleted(
    deletion: Pick<DeletionRecord, 'tenant' | 'stream' | 'deletionId'> & { offboardingId: string },
  ): Promise<'not-linked' | 'completed' | 'running'> {
    const counted = await this.#offboardings.countCompleted(
      deletion,
      deletion.stream,
      deletion.deletionId,
    );
    if (!counted) return 'not-linked';
    const outcome = await this.#completeIfCounted(deletion);
    return outcome === 'completed' ? 'completed' : 'running';
  }

  /** Looks at the offboarding (reading every deletion) only once its count says all are done. */
  async #completeIfCounted(ref: { tenant: string; offboardingId: string }) {
    const offboarding = await this.#offboardings.get(ref.tenant);
    if (offboarding?.offboardingId !== ref.offboardingId) return 'running';
    if (offboarding.state !== 'RUNNING' || !offboarding.fannedOut) return 'running';
    if ((await this.#offboardings.completedCount(offboarding)) < offboarding.streams) {
      return 'running';
    }
    return this.refresh(offboarding);
  }

  /**
   * The sweeper's look at an offboarding under way. A fan-out that made no step for a while
   * (its step's stream record failed for good) is taken on from where it stopped.
   */
  async refresh(offboarding: OffboardingRecord): Promise<'completed' | 'running' | 'cancelled'> {
    if (offboarding.state === 'CANCELLED') return this.#cancelRest(offboarding);
    if (offboarding.state !== 'RUNNING') return 'running';
    const now = this.#clock.now().getTime();
    if (!offboarding.fannedOut) {
      const idle = now - Date.parse(offboarding.updatedAt);
      if (idle < this.#staleAfterMs) return 'running';
      return (await this.fanOut(offboarding)) === 'completed' ? 'completed' : 'running';
    }
    // Its window is over and its last write was within it: the write that says so (RUNNING).
    const window = Date.parse(offboarding.executeAfter);
    if (Date.parse(offboarding.updatedAt) < window && now >= window) {
      await this.#offboardings.windowEnded(offboarding);
    }
    const linked = await this.#linked(offboarding);
    // A counted one is done: its stream was removed by another deletion (`#deletedBy`).
    const cancelled = linked.filter(
      ({ link, deletion }) => !link.completed && deletion?.state === 'CANCELLED',
    );
    if (cancelled.length > 0) {
      await this.#retake(offboarding, cancelled);
      return (await this.#completeIfCounted(offboarding)) === 'completed' ? 'completed' : 'running';
    }
    // Counted as the sweep sees it too: a stream stays done once its deletion's receipt expires.
    for (const { link } of linked.filter(isUncounted)) {
      await this.#offboardings.countCompleted(offboarding, link.stream, link.deletionId);
    }
    if (!linked.every(isDone)) return 'running';
    const totals = totalsOf(linked);
    return (await this.#offboardings.complete(offboarding, totals)) ? 'completed' : 'running';
  }

  /** The offboarding as the API answers it: its deletions, their states, summed counts. */
  async view(tenant: string): Promise<OffboardingView> {
    const offboarding = await this.#offboardings.get(tenant);
    if (!offboarding) throw new OffboardingNotFoundError(tenant);
    const deletions = (await this.#linked(offboarding))
      .map(({ deletion }) => deletion)
      .filter((deletion): deletion is DeletionRecord => deletion !== undefined);
    return toOffboardingView(offboarding, this.#clock.now(), deletions);
  }

  /**
   * Cancels every deletion it requested that has not started; settles once none is left. One it
   * adopted (requested before it, by the tenant, say) keeps its own schedule. A failed cancel
   * throws once every other was tried: the sweeper then begins none of the tenant's deletions.
   */
  async #cancelRest(offboarding: OffboardingRecord): Promise<'cancelled'> {
    let left = 0;
    const failed: unknown[] = [];
    for (const { link, deletion } of await this.#linked(offboarding)) {
      if (link.adopted || deletion?.state !== 'SCHEDULED') continue;
      left++;
      try {
        await this.#deletions.cancel(deletion.tenant, deletion.deletionId);
      } catch (error) {
        // Started meanwhile (its window ended) or gone: it runs to its end. Else: throw, later.
        const ended = error instanceof DeletionNotCancellableError;
        if (!ended && !(error instanceof DeletionNotFoundError)) failed.push(error);
      }
    }
    if (failed.length > 0) throw failed[0];
    const settled = Date.parse(offboarding.cancelledAt ?? offboarding.updatedAt) + SETTLE_AFTER_MS;
    if (left === 0 && this.#clock.now().getTime() > settled) {
      await this.#offboardings.settleCancel(offboarding);
    }
    return 'cancelled';
  }

  /**
   * Streams whose deletion was cancelled under a running offboarding (an offboarding cancelled
   * just before this one was requested cancels the scheduled deletions this one took in as they
   * were) get a deletion again, with this offboarding's window, and their links follow it: a
   * stream is never left undeleted, nor the offboarding waiting on a deletion that will not run.
   * One another deletion removed meanwhile is counted (`#deletedBy`): it may have been the last.
   */
  async #retake(offboarding: OffboardingRecord, cancelled: Linked[]) {
    for (const { link } of cancelled) {
      try {
        const { created, deletion } = await this.#deletions.request(
          offboarding.tenant,
          link.stream,
          this.#graceLeft(offboarding),
          // Linked in its tombstone's transaction, in place of the cancelled one.
          {
            offboardingId: offboarding.offboardingId,
            linkItems: (fresh) =>
              this.#offboardings.relinkItems(
                offboarding,
                link.stream,
                link.deletionId,
                fresh.deletionId,
              ),
          },
        );
        // Requested since by someone else: adopted. One naming it is its own (a repeat, or
        // relinked already with its request).
        const adopted = !created && deletion.offboardingId !== offboarding.offboardingId;
        const to = deletion.deletionId;
        await this.#offboardings.relink(offboarding, link.stream, link.deletionId, to, adopted);
      } catch (error) {
        // Gone since: another deletion completed it, and the link follows that one. Or relinked
        // by another sweep meanwhile, or the offboarding cancelled since this sweep read it. Or a
        // partition deletion of it is under way: the next sweep takes it again.
        if (error instanceof StreamNotFoundError) await this.#deletedBy(offboarding, link);
        else if (error instanceof TakenInAlreadyError) continue;
        else if (!(error instanceof PartitionDeletionInProgressError)) throw error;
      }
    }
  }

  /**
   * A stream whose cancelled deletion another (the tenant's, say) replaced and completed before
   * a sweep took it in again: its data is gone, so its link follows that deletion, counted.
   */
  async #deletedBy(offboarding: OffboardingRecord, link: OffboardingLink) {
    const stream = await this.#streams.find(offboarding.tenant, link.stream);
    if (stream?.state !== 'DELETED') return;
    // Freed before streams named the deletion that freed them: the cancelled one stands for it.
    const by = stream.deletedBy ?? link.deletionId;
    await this.#offboardings.relink(offboarding, link.stream, link.deletionId, by, true);
    await this.#offboardings.countCompleted(offboarding, link.stream, by);
  }

  /** Seconds left of the offboarding's grace window, which its stream deletions share. */
  #graceLeft(offboarding: OffboardingRecord) {
    const left = Date.parse(offboarding.executeAfter) - this.#clock.now().getTime();
    return Math.max(0, Math.ceil(left / 1000));
  }

  /** Each link of the offboarding with its deletion (read 100 a request). */
  async #linked(offboarding: OffboardingRecord): Promise<Linked[]> {
    const links: OffboardingLink[] = [];
    for await (const link of this.#offboardings.links(offboarding)) links.push(link);
    const deletions = await this.#deletions.getMany(links);
    return links.map((link, index) => ({ link, deletion: deletions[index] }));
  }
}
