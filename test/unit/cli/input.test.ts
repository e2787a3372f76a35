import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../../lib/cli/args.ts';
import { MAX_INPUT_BYTES, readBounded, readInput } from '../../../lib/cli/input.ts';

/** A stream that never ends, as /dev/zero or `yes` piped in: it counts what was pulled. */
function endless(chunkBytes: number) {
  const pulled = { bytes: 0, destroyed: false };
  const stream = new Readable({
    read() {
      pulled.bytes += chunkBytes;
      this.push(Buffer.alloc(chunkBytes));
    },
    destroy(error, done) {
      pulled.destroyed = true;
      done(error);
    },
  });
  return { stream, pulled };
}

describe('reading a file argument', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lethe-input-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('stops an endless input at the limit, says so, and lets go of the stream', async () => {
    // Prepare: 1 KiB chunks against a limit of 10 KiB.
    const { stream, pulled } = endless(1024);

    // Act
    const reading = readBounded(stream, '-', 10 * 1024);

    // Assess: a usage error (exit 2) naming stdin, after reading little more than the limit.
    await expect(reading).rejects.toThrow(
      new UsageError(
        'cannot read stdin: it is larger than 10240 bytes, more than any request Lethe takes',
      ),
    );
    expect(pulled.bytes).toBeLessThan(64 * 1024);
    expect(pulled.destroyed).toBe(true);
  });

  it('reads an input of exactly the limit whole', async () => {
    const bytes = await readBounded(Readable.from([Buffer.alloc(6), Buffer.from('abcd')]), 'f', 10);
    expect(Buffer.from(bytes).toString('latin1')).toBe('\0\0\0\0\0\0abcd');
  });

  it('allows 64 MiB, more than the API takes in one request, and says it in MiB', async () => {
    expect(MAX_INPUT_BYTES).toBe(64 * 1024 * 1024);
    await expect(readBounded(endless(1024 * 1024).stream, 'big.json')).rejects.toThrow(
      'cannot read big.json: it is larger than 64 MiB, more than any request Lethe takes',
    );
  });

  it('reads a file and stdin byte for byte', async () => {
    const file = join(dir, 'events.json');
    writeFileSync(file, '[{"n":1}]\n');
    expect(Buffer.from(await readInput(file, Readable.from([]))).toString()).toBe('[{"n":1}]\n');
    const stdin = Readable.from([Buffer.from('[1,'), Buffer.from('2]')]);
    expect(Buffer.from(await readInput('-', stdin)).toString()).toBe('[1,2]');
  });

  it('names a file it cannot open in a usage error', async () => {
    const missing = join(dir, 'missing.json');
    await expect(readInput(missing, Readable.from([]))).rejects.toThrow(
      `cannot read ${missing}: ENOENT: no such file or directory, open '${missing}'`,
    );
    await expect(readInput(dir, Readable.from([]))).rejects.toBeInstanceOf(UsageError);
  });
});
