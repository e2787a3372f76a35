import type { CallEvent } from './counting.ts';

interface Received {
  at: number;
  batch: number;
}

/**
 * What the queue's own calls tell about the worker, without touching it: how long a page
 * message waits in the queue (its `SentTimestamp` to the receive that returned it) and how
 * long an invocation runs (the receive returning to the event source deleting its messages).
 */
export class QueueTimeline {
  readonly #received = new Map<string, Received>();
  readonly #open = new Map<number, { at: number; size: number }>();
  #batches = 0;
  /** Milliseconds a page message waited in the queue before a poller received it. */
  readonly dwellMs: number[] = [];
  /** Milliseconds from a batch's receive to the deletion of its messages. */
  readonly invocationMs: number[] = [];
  readonly recordsPerInvocation: number[] = [];
  /** When each page message of each chain was sent (by the worker that listed the page before). */
  readonly #sent = new Map<string, Map<number, number>>();

  readonly observe = (event: CallEvent) => {
    if (event.service !== 'sqs' || event.failed) return;
    const endedAt = Date.now();
    if (event.command === 'ReceiveMessage') this.#onReceive(event, endedAt);
    if (event.command === 'DeleteMessageBatch') this.#onDelete(event, endedAt - event.ms);
  };

  reset() {
    this.#received.clear();
    this.#open.clear();
    this.dwellMs.length = 0;
    this.invocationMs.length = 0;
    this.recordsPerInvocation.length = 0;
    this.#sent.clear();
  }

  /**
   * Milliseconds between the sending of consecutive pages of a chain: how long one link of a
   * chain takes (queue wait, reads, listing, recording it, sending the next page).
   */
  chainCycleMs(): number[] {
    const cycles: number[] = [];
    for (const pages of this.#sent.values()) {
      const ordered = [...pages.entries()].sort(([a], [b]) => a - b);
      for (let index = 1; index < ordered.length; index++) {
        const [page, sent] = ordered[index] as [number, number];
        const [previousPage, previousSent] = ordered[index - 1] as [number, number];
        if (page === previousPage + 1) cycles.push(sent - previousSent);
      }
    }
    return cycles;
  }

  #onReceive(event: CallEvent, at: number) {
    const messages = (event.output?.Messages ?? []) as Array<{
      ReceiptHandle?: string;
      Body?: string;
      Attributes?: Record<string, string>;
    }>;
    if (messages.length === 0) return;
    const batch = ++this.#batches;
    this.#open.set(batch, { at, size: messages.length });
    for (const message of messages) {
      if (message.ReceiptHandle) this.#received.set(message.ReceiptHandle, { at, batch });
      const sent = Number(message.Attributes?.SentTimestamp);
      this.#rememberPage(message.Body, sent);
      // Finalize messages are delayed on purpose (the ingest grace): not a queue latency.
      if (Number.isFinite(sent) && !message.Body?.includes('"finalize"')) {
        this.dwellMs.push(Math.max(0, at - sent));
      }
    }
  }

  #onDelete(event: CallEvent, at: number) {
    const entries = (event.input.Entries ?? []) as Array<{ ReceiptHandle?: string }>;
    const first = entries[0]?.ReceiptHandle && this.#received.get(entries[0].ReceiptHandle);
    if (!first) return;
    const open = this.#open.get(first.batch);
    this.#open.delete(first.batch);
    for (const entry of entries) this.#received.delete(entry.ReceiptHandle ?? '');
    this.invocationMs.push(at - first.at);
    this.recordsPerInvocation.push(open?.size ?? entries.length);
  }

  #rememberPage(body: string | undefined, sent: number) {
    if (!body || !Number.isFinite(sent)) return;
    try {
      const message = JSON.parse(body) as {
        type?: string;
        deletionId?: string;
        chainId?: string;
        page?: number;
      };
      if (message.type !== 'page' || message.page === undefined) return;
      const chain = `${message.deletionId}/${message.chainId}`;
      const pages = this.#sent.get(chain) ?? new Map<number, number>();
      pages.set(message.page, sent);
      this.#sent.set(chain, pages);
    } catch {
      // not a work message
    }
  }
}
