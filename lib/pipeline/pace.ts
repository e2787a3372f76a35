import {
  type ChainRecord,
  type Clock,
  type PageMessage,
  type PageRecord,
  pageMessage,
  systemClock,
} from '../core/index.ts';
import { MAX_DELAY_SECONDS } from '../queue/index.ts';
import { sleep as realSleep } from '../support/index.ts';
import type { Chains, WorkSender } from './ports.ts';

/**
 * How a chain learns the pace S3 allows it. S3 admits a limited rate of deleted keys per
 * prefix partition and answers 503 SlowDown above it, without saying what the rate is. A chain
 * runs unpaced until S3 first refuses it; from then on it carries a pace (keys a second) and
 * lists a page only when the pace allows. Each refusal cuts the pace; each page S3 admits
 * raises it: quickly until the chain has been refused at a pace, slowly from then on, so the
 * chain spends most of its time just under the limit and meets it again only rarely.
 */
export const PACE = {
  /**
   * Pages a second of a chain's first pace (unless it ran long enough for the rate it kept to
   * mean something): below any limit a first refusal suggests, so it is met again by rising.
   */
  firstPages: 0.5,
  /**
   * A paced chain's page goes a slot after the page before it, at the pace before that page's
   * rise: S3 refused the pace one rise below the chain's, and admitted the one below that. The
   * pace after a refusal is this share of the pace admitted: just under it, since S3's limit
   * lies between the two, in the first paced refusal a whole `rampUp` apart.
   */
  firstCut: 0.98,
  /** As `firstCut`, for a later refusal (the two paces a `probe` apart): a little deeper. */
  cut: 0.97,
  /** Rise per admitted page, as a share of the pace, before any paced refusal. */
  rampUp: 0.05,
  /**
   * Rise per admitted page once a paced refusal showed where the limit is: slow, so a chain
   * meets the limit again after many pages (about 100 to rise 5%), not a few.
   */
  probe: 0.0005,
  /**
   * The highest pace, keys a second: a page's slot of a millisecond, shorter than any delete,
   * so a higher pace would change nothing. Without it a chain S3 stopped refusing would rise
   * 5% a page for ever, past what the chain item can hold (DynamoDB's numbers end at 1E+126,
   * some 6,000 pages on), and every later count of the chain would fail.
   */
  maxPace: 1_000_000,
  /**
   * An unpaced chain starts at the rate it kept with this much more time: a prefix admits a
   * burst before it refuses, so what a young chain deleted overstates its rate; counting one
   * burst's time more (about a second of S3's rate) discounts it, less so the longer it ran.
   */
  burstMs: 1_000,
  /**
   * How long before its slot a paced chain's page may come off the queue and list: SQS delays
   * are whole seconds, and a page that came exactly at its slot would delete a listing late.
   */
  leadMs: 500,
  /**
   * How long before its slot a paced page takes it, as a share of the slot's length: room for
   * the conditional write, whose latency varies with the table's load, so the delete still goes
   * at its slot; and late enough that the page before has deleted and, if S3 refused it, moved
   * the slot first.
   */
  take: 0.5,
  /**
   * How long a page of an unpaced chain waits for the page before it to be answered (admitted,
   * or refused and the chain paced), looking again every `inTurnPollMs`: pipelined, it listed
   * while that page deleted, and if S3 refused that one it would refuse this one too. A page
   * that stays open longer (its worker died) is not waited for.
   */
  inTurnMs: 2_000,
  inTurnPollMs: 50,
} as const;

export type Paced = Pick<ChainRecord, 'pace' | 'ceiling' | 'nextAt'>;

/**
 * A page before `page` is open (listed, and neither deleted nor refused yet) and was listed
 * less than `PACE.inTurnMs` before `now`: one open longer (its worker died) is not waited for.
 */
const openBefore = (chain: Pick<ChainRecord, 'open'>, page: number, now: number) =>
  Object.entries(chain.open ?? {}).some(
    ([listed, record]) => Number(listed) < page && (record.listedAt ?? now) > now - PACE.inTurnMs,
  );

/** Milliseconds the chain must wait before listing its next page: 0 when it may go now. */
export function paceWait(chain: Paced, now: number): number {
  if (chain.pace === undefined || chain.nextAt === undefined) return 0;
  return Math.max(0, chain.nextAt - now);
}

/** When the page after one of `keys` entries, listed at `now`, may be listed. */
export function nextSlot(chain: Paced, keys: number, now: number): number | undefined {
  if (chain.pace === undefined) return undefined;
  return Math.max(now, chain.nextAt ?? 0) + slotMs(chain.pace, keys);
}

/** The share of its pace an admitted page adds: a ramp until a paced refusal, then a probe. */
const riseShare = (chain: Paced) => (chain.ceiling === undefined ? PACE.rampUp : PACE.probe);

/** What an admitted page adds to the chain's pace. */
export function paceRise(chain: Paced): number {
  if (chain.pace === undefined) return 0;
  return Math.max(0, Math.min(chain.pace * riseShare(chain), PACE.maxPace - chain.pace));
}

/** What the chain knows after S3 refused one of its pages at `now`. */
export interface Refusal {
  pace: number;
  /** The pace S3 refused (the chain's, one rise down): set once refused while paced. */
  ceiling?: number;
  /** The refused page comes back after this many seconds (SQS delays are whole seconds). */
  retrySeconds: number;
  /** No page of the chain goes before the slot after the refusal. */
  nextAt: number;
}

/**
 * The pace after S3 refused a page of `pageSize` keys. A paced chain cuts its pace; an unpaced
 * one starts at the rate it kept (what it deleted over how long it ran, and a burst's time
 * more), and at least at `PACE.firstPages`.
 */
export function afterRefusal(
  chain: Paced & Pick<ChainRecord, 'objectsDeleted' | 'startedAt'>,
  pageSize: number,
  now: number,
): Refusal {
  let pace: number;
  let ceiling: number | undefined;
  if (chain.pace !== undefined) {
    const rise = 1 + riseShare(chain);
    ceiling = chain.pace / rise;
    pace = (ceiling / rise) * (chain.ceiling === undefined ? PACE.firstCut : PACE.cut);
  } else {
    // A start another worker's clock put ahead of this one's ran for no time (not less).
    const ran = chain.startedAt === undefined ? 0 : Math.max(0, now - chain.startedAt);
    const kept = (chain.objectsDeleted * 1000) / (ran + PACE.burstMs);
    pace = Math.max(pageSize * PACE.firstPages, kept);
  }
  const slot = slotMs(pace, pageSize);
  return {
    pace,
    ...(ceiling !== undefined ? { ceiling } : {}),
    // Whole seconds by SQS; the rest is slept out by the page's gate when it comes back.
    retrySeconds: Math.min(MAX_DELAY_SECONDS, Math.floor(Math.max(0, slot - PACE.leadMs) / 1000)),
    nextAt: now + slot,
  };
}

const slotMs = (pace: number, keys: number) => (keys * 1000) / pace;

export interface ChainPacerOptions {
  readonly chains: Chains<'get' | 'slowDown' | 'takeSlot'>;
  readonly queue: WorkSender;
  /** Keys a page holds at most. */
  readonly pageSize: number;
  readonly clock?: Clock;
  readonly sleep?: (ms: number) => Promise<void>;
  /**
   * The longest a page's message is sent back for, however far its slot: the fence's interval,
   * so a page of a slow chain comes back and marks its deletion alive before the sweeper takes
   * it for stalled (throttling is never a failure). @default SQS's longest delay
   */
  readonly longestDelaySeconds?: number;
}

/** Whether a page lists now, or comes back later (its slot is 1.5 s or more away). */
export type Gate = { go: 'now' } | { go: 'later'; seconds: number };

/** Whether a listed page deletes now (its chain as it took the slot), later, or never. */
export type Turn =
  | { go: 'now'; chain: ChainRecord }
  | { go: 'later'; seconds: number }
  | { go: 'gone' };

/**
 * The page worker's side of pacing: a page of a paced chain lists up to 1.5 s before its
 * slot (further off, it comes back by SQS delay), sleeps out the rest after listing, takes
 * the slot with one conditional write just before it comes, and deletes at its time; a
 * refusal slows the chain down.
 */
export class ChainPacer {
  readonly #chains: ChainPacerOptions['chains'];
  readonly #queue: WorkSender;
  readonly #pageSize: number;
  readonly #clock: Clock;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #longestDelay: number;

  constructor(options: ChainPacerOptions) {
    this.#chains = options.chains;
    this.#queue = options.queue;
    this.#pageSize = options.pageSize;
    this.#clock = options.clock ?? systemClock;
    this.#sleep = options.sleep ?? realSleep;
    this.#longestDelay = Math.min(
      MAX_DELAY_SECONDS,
      options.longestDelaySeconds ?? MAX_DELAY_SECONDS,
    );
  }

  now(): number {
    return this.#clock.now().getTime();
  }

  /** A slot 1.5 s or more away: the message is sent again, delayed to arrive before it. */
  async gate(chain: ChainRecord, message: PageMessage): Promise<Gate> {
    if (paceWait(chain, this.now()) < 1000 + PACE.leadMs) return { go: 'now' };
    return this.#sendBack(message, chain.nextAt);
  }

  /**
   * Waits for a listed page's slot and takes it: one conditional write, so two pages never
   * share a slot; a page that loses it reads the chain again and waits for the next. The slot
   * is taken half a slot before it comes (`PACE.take`) and the delete goes at its time, so the
   * write's latency never moves a delete closer to the one before. A slot 1.5 s or more away
   * (S3 slowed the chain meanwhile) sends the page back for it. An unpaced chain goes with no
   * write, once the page before it was answered (`PACE.inTurnMs`).
   */
  async turn(chain: ChainRecord, page: PageRecord, keys: number): Promise<Turn> {
    let waited = 0;
    // Each pass that does not go reads the chain again (gone: its deletion moved on).
    for (
      let current: ChainRecord | undefined = chain;
      current;
      current = await this.#chains.get(current, current.chainId)
    ) {
      if (current.pace === undefined) {
        if (!openBefore(current, page.page, this.now()) || waited >= PACE.inTurnMs) {
          return { go: 'now', chain: current };
        }
        await this.#sleep(PACE.inTurnPollMs);
        waited += PACE.inTurnPollMs;
        continue;
      }
      const wait = paceWait(current, this.now());
      if (wait >= 1000 + PACE.leadMs) {
        return this.#sendBack(
          { ...pageMessage(current, page.page), handedOn: true },
          current.nextAt,
        );
      }
      const slot = slotMs(current.pace, keys);
      if (wait > PACE.take * slot) await this.#sleep(wait - PACE.take * slot);
      const at = Math.max(this.now(), current.nextAt ?? 0);
      const taken = await this.#chains.takeSlot(current, at + slot);
      if (taken) {
        // A slot after the last delete as it went: one that went late (a busy worker, a slow
        // call) does not bring this one closer to it than the pace allows.
        const early = Math.max(at, (taken.sentAt ?? 0) + slot) - this.now();
        if (early > 0) await this.#sleep(early);
        return { go: 'now', chain: taken };
      }
    }
    return { go: 'gone' };
  }

  /** Sends a page's message again, to come back just before its chain's slot at `nextAt`. */
  async #sendBack(message: PageMessage, nextAt: number | undefined) {
    const seconds = this.delayTo(nextAt);
    await this.#queue.send([message], seconds);
    return { go: 'later' as const, seconds };
  }

  /** The delay, in whole seconds, of a message for the chain's slot at `nextAt`. */
  delayTo(nextAt: number | undefined): number {
    if (nextAt === undefined) return 0;
    const seconds = Math.floor((nextAt - PACE.leadMs - this.now()) / 1000);
    return Math.min(this.#longestDelay, Math.max(0, seconds));
  }

  /**
   * S3 refused the page with SlowDown. The chain slows down, unless another page's refusal
   * slowed it since this page was let go (`seenCutAt`): one event, one cut. The page, still
   * open, comes back when the chain's next slot does.
   */
  async refused(chain: ChainRecord, page: PageRecord, seenCutAt: number | undefined) {
    const now = this.now();
    const refusal = afterRefusal(chain, this.#pageSize, now);
    const cut = await this.#chains.slowDown(chain, { ...refusal, cutAt: now }, seenCutAt);
    const current = cut.ok ? refusal : cut.current;
    const seconds = cut.ok
      ? Math.min(this.#longestDelay, refusal.retrySeconds)
      : this.delayTo(cut.current?.nextAt);
    // Every run that tries to delete a page has handed on the next one first.
    const again = [{ ...pageMessage(chain, page.page), handedOn: true as const }];
    await (seconds > 0 ? this.#queue.send(again, seconds) : this.#queue.send(again));
    return {
      outcome: 'slowed' as const,
      seconds,
      pace: Math.round(current?.pace ?? refusal.pace),
    };
  }
}
