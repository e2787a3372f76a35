import { keys } from './layout.ts';
import type { Table } from './table.ts';

export interface Admission {
  admitted: boolean;
  /** Milliseconds until room for the keys (0 when admitted). */
  waitMs: number;
}

/** Turns between a busy and an idle budget before an admission gives up for now. */
const ATTEMPTS = 5;

/**
 * A bucket's key budget, shared by every worker: the generic cell rate algorithm on one item.
 * The item holds the budget's theoretical arrival time (`tat`, epoch milliseconds): admitting
 * `n` keys moves it `n / rate` seconds past the later of itself and now, provided it stays
 * within the burst of now. A busy budget admits with one atomic conditional increment (no
 * read, so concurrent workers never lose a turn to each other); an idle one is restarted at
 * now, conditionally.
 */
export class BudgetStore {
  readonly #table: Table;

  constructor(options: { table: Table }) {
    this.#table = options.table;
  }

  async admit(
    bucket: string,
    count: number,
    keysPerSecond: number,
    burstKeys: number,
    nowMs: number,
  ): Promise<Admission> {
    const key = keys.keyBudget(bucket);
    const cost = (count * 1000) / keysPerSecond;
    const latest = nowMs + (burstKeys * 1000) / keysPerSecond - cost;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const busy = await this.#table.update<{ tat: number }>(key, {
        update: 'SET tat = tat + :cost',
        values: { ':cost': cost, ':now': nowMs, ':latest': latest },
        condition: { expression: 'tat >= :now AND tat <= :latest' },
      });
      if (busy.ok) return { admitted: true, waitMs: 0 };
      const tat = busy.old?.tat;
      if (tat !== undefined && tat > latest) return { admitted: false, waitMs: tat - latest };
      // Idle (or never used): the budget starts again from now.
      const idle = await this.#table.update(key, {
        update: 'SET tat = :next',
        values: { ':next': nowMs + cost, ':now': nowMs },
        condition: { expression: 'attribute_not_exists(tat) OR tat < :now' },
      });
      if (idle.ok) return { admitted: true, waitMs: 0 };
    }
    return { admitted: false, waitMs: cost };
  }

  /** Gives back keys admitted but not used (a page that listed fewer than it asked room for). */
  async refund(bucket: string, count: number, keysPerSecond: number): Promise<void> {
    await this.#table.update(keys.keyBudget(bucket), {
      update: 'SET tat = tat - :cost',
      values: { ':cost': (count * 1000) / keysPerSecond },
      condition: { expression: 'attribute_exists(tat)' },
    });
  }
}
