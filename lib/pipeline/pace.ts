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
   * The pace after the first refusal of a paced chain: its first guess overshot, by how much
   * is unknown, so the cut is deep.
   */
  firstCut: 0.7,
  /** The pace after a later refusal is this share of the pace refused. */
  cut: 0.85,
  /** Rise per admitted page, as a share of the pace, before any paced refusal. */
  rampUp: 0.05,
  /** Rise per admitted page once a paced refusal showed where the limit is. */
  probe: 0.003,
  /**
   * An unpaced chain refused after running at least this long starts at the rate it kept; a
   * younger one (its rate is mostly the partition's burst) starts at a page a second.
   */
  measureAfterMs: 5_000,
} as const;

export type Paced = Pick<ChainRecord, 'pace' | 'ceiling' | 'nextAt'>;

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

/** What an admitted page adds to the chain's pace. */
export function paceRise(chain: Paced): number {
  if (chain.pace === undefined) return 0;
  return chain.pace * (chain.ceiling === undefined ? PACE.rampUp : PACE.probe);
}

/** What the chain knows after S3 refused one of its pages at `now`. */
export interface Refusal {
  pace: number;
  /** The pace S3 refused: set once the chain was refused while paced. */
  ceiling?: number;
  /** The refused page comes back after this many seconds (SQS delays are whole seconds). */
  retrySeconds: number;
  /** No page of the chain goes before the slot after the refusal. */
  nextAt: number;
}

/**
 * The pace after S3 refused a page of `pageSize` keys. A paced chain cuts its pace; an unpaced
 * one starts at the rate it kept (what it deleted over how long it ran) when it ran long enough
 * for that to mean something, and otherwise at a page a second.
 */
export function afterRefusal(
  chain: Paced & Pick<ChainRecord, 'objectsDeleted' | 'startedAt'>,
  pageSize: number,
  now: number,
): Refusal {
  const paced = chain.pace !== undefined;
  let pace: number;
  if (chain.pace !== undefined) {
    pace = chain.pace * (chain.ceiling === undefined ? PACE.firstCut : PACE.cut);
  } else {
    const ran = chain.startedAt === undefined ? 0 : now - chain.startedAt;
    const kept = ran >= PACE.measureAfterMs ? (chain.objectsDeleted * 1000) / ran : 0;
    pace = Math.max(pageSize, kept);
  }
  const slot = slotMs(pace, pageSize);
  return {
    pace,
    ...(paced ? { ceiling: chain.pace } : {}),
    // Whole seconds by SQS; the rest is slept out by the page's gate when it comes back.
    retrySeconds: Math.min(MAX_DELAY_SECONDS, Math.floor(slot / 1000)),
    nextAt: now + slot,
  };
}

const slotMs = (pace: number, keys: number) => (keys * 1000) / pace;

export interface ChainPacerOptions {
  readonly chains: Chains<'slowDown' | 'takeSlot'>;
  readonly queue: WorkSender;
  /** Keys a page holds at most. */
  readonly pageSize: number;
  readonly clock?: Clock;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** What a page does about its chain's pace: go now, read the chain again, or come back later. */
export type Gate = { go: 'now' } | { go: 'again' } | { go: 'later'; seconds: number };

/**
 * The page worker's side of pacing: waits for a chain's slot (whole seconds by SQS delay, the
 * rest slept), takes the slot for a page sent back, and slows the chain down on a refusal.
 */
export class ChainPacer {
  readonly #chains: ChainPacerOptions['chains'];
  readonly #queue: WorkSender;
  readonly #pageSize: number;
  readonly #clock: Clock;
  readonly #sleep: (ms: number) => Promise<void>;

  constructor(options: ChainPacerOptions) {
    this.#chains = options.chains;
    this.#queue = options.queue;
    this.#pageSize = options.pageSize;
    this.#clock = options.clock ?? systemClock;
    this.#sleep = options.sleep ?? realSleep;
  }

  now(): number {
    return this.#clock.now().getTime();
  }

  /**
   * Waits for the chain's slot. A second or more away: the message is sent again, delayed by
   * the whole seconds. Less: slept out, after which the chain must be read again, for S3 may
   * have slowed it meanwhile.
   */
  async gate(chain: ChainRecord, message: PageMessage): Promise<Gate> {
    const wait = paceWait(chain, this.now());
    if (wait === 0) return { go: 'now' };
    if (wait >= 1000) {
      const seconds = this.delayTo(chain.nextAt);
      await this.#queue.send([message], seconds);
      return { go: 'later', seconds };
    }
    await this.#sleep(wait);
    return { go: 'again' };
  }

  /**
   * A page sent back after a refusal takes its chain's slot before it deletes: one conditional
   * write, so two pages never share a slot. False when another page took it first.
   */
  async takeSlot(chain: ChainRecord, page: PageRecord): Promise<boolean> {
    const now = this.now();
    const next = nextSlot(chain, page.count, now);
    if (next === undefined) return true;
    return this.#chains.takeSlot(chain, now, next);
  }

  /** The delay, in whole seconds, of a message for the chain's slot at `nextAt`. */
  delayTo(nextAt: number | undefined): number {
    if (nextAt === undefined) return 0;
    const seconds = Math.floor((nextAt - this.now()) / 1000);
    return Math.min(MAX_DELAY_SECONDS, Math.max(0, seconds));
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
    const seconds = cut.ok ? refusal.retrySeconds : this.delayTo(cut.current?.nextAt);
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
