import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { UsageError } from './args.ts';
import { inputName } from './values.ts';

/**
 * The most a file argument may hold: more than any request Lethe takes (the API refuses an
 * events body over its own limit, and says so), and a bound on what a mistaken argument such
 * as `/dev/zero` or an endless pipe can make the CLI hold in memory.
 */
export const MAX_INPUT_BYTES = 64 * 1024 * 1024;

const MIB = 1024 * 1024;
const inWords = (bytes: number) => (bytes % MIB === 0 ? `${bytes / MIB} MiB` : `${bytes} bytes`);

/** The bytes of `source`, or a UsageError naming `name` once it has passed `limit`. */
export async function readBounded(
  source: AsyncIterable<Uint8Array | string> & Partial<Pick<Readable, 'destroy'>>,
  name: string,
  limit = MAX_INPUT_BYTES,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of source) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    size += bytes.byteLength;
    if (size > limit) {
      source.destroy?.();
      throw new UsageError(
        `cannot read ${inputName(name)}: it is larger than ${inWords(limit)}, more than any request Lethe takes`,
      );
    }
    chunks.push(bytes);
  }
  return Buffer.concat(chunks);
}

/** The bytes of FILE, or of stdin for `-`, at most MAX_INPUT_BYTES. */
export async function readInput(file: string, stdin: Readable): Promise<Uint8Array> {
  try {
    return await readBounded(file === '-' ? stdin : createReadStream(file), file);
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`cannot read ${file}: ${error instanceof Error ? error.message : error}`);
  }
}
