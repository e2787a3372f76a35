/** A terminal or a pipe: progress is redrawn in place on a TTY, printed as lines elsewhere. */
export interface Output {
  write(chunk: string): unknown;
  readonly isTTY?: boolean;
  readonly columns?: number;
}

/**
 * One line of progress on stderr: redrawn in place on a TTY, cut to the terminal's width; a
 * `lethe: ` line elsewhere, at every change of state and otherwise at most every
 * `plainIntervalMs`, so that a log is not flooded.
 */
export class StatusLine {
  readonly #output: Output;
  readonly #plainIntervalMs: number;
  #lastPlain: { at: number; state: string } | undefined;
  /** A line is drawn on the TTY and not yet cleared or ended. */
  #drawn = false;

  constructor(output: Output, plainIntervalMs = 5_000) {
    this.#output = output;
    this.#plainIntervalMs = plainIntervalMs;
  }

  /** Whether the line is redrawn in place (a terminal) rather than printed. */
  get isTTY(): boolean {
    return this.#output.isTTY === true;
  }

  /** Redraws the line on a TTY; elsewhere prints it at every change of state, else now and then. */
  show(state: string, at: number, line: string): void {
    if (this.#output.isTTY) {
      // A terminal that does not know its width says 0.
      const columns = this.#output.columns || 80;
      this.#output.write(`\r${line.slice(0, Math.max(1, columns - 1))}\x1b[K`);
      this.#drawn = true;
      return;
    }
    const last = this.#lastPlain;
    if (last && last.state === state && at - last.at < this.#plainIntervalMs) return;
    this.#lastPlain = { at, state };
    this.#output.write(`lethe: ${line}\n`);
  }

  /** On a TTY, the final line, written whole, once: it stays. */
  end(line: string): void {
    this.#output.write(`\r${line}\x1b[K\n`);
    this.#drawn = false;
  }

  /** Clears a line left drawn, so what follows starts on a clean line. */
  clear(): void {
    if (this.#output.isTTY && this.#drawn) this.#output.write('\r\x1b[K');
    this.#drawn = false;
  }
}
