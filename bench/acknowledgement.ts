import { setTimeout as sleep } from 'node:timers/promises';
import { type StackContext, seededStream, TENANT } from './context.ts';
import { letheDelete } from './deleters.ts';
import { percentile, type Summary, summarize } from './stats.ts';

/** Pause between a stream's seeding and its timed DELETE (see `measureAcknowledgement`). */
const SETTLE_MS = 300;

export interface AckSample {
  stream: string;
  objects: number;
  ackMs: number;
  /** DELETE to COMPLETED of the same deletion. */
  completedMs: number;
}

export interface Acknowledgement {
  small: { objects: number; samples: AckSample[]; ackMs: Summary };
  large: { objects: number; samples: AckSample[]; ackMs: Summary };
  /** p50 of the large streams over p50 of the small ones (target: at most 1.5). */
  p50Ratio: number;
  p95Ratio: number;
}

/**
 * DELETE latency of small and large streams, interleaved (small first on even rounds, large
 * first on odd ones) so that drift in the emulator (its table grows with every deletion)
 * weighs on both sizes alike. Each stream is seeded just before its DELETE, and each deletion
 * runs to COMPLETED before the next DELETE, so every acknowledgement is timed on a quiet
 * pipeline and the bucket never holds more than one large stream.
 */
export async function measureAcknowledgement(context: StackContext): Promise<Acknowledgement> {
  const { options, log } = context;
  const sizes = { small: options.ackSmallObjects, large: options.ackLargeObjects };
  const samples: Record<'small' | 'large', AckSample[]> = { small: [], large: [] };
  const one = async (size: 'small' | 'large', round: number) => {
    const stream = `ack-${size}-${round}`;
    await seededStream(context, stream, sizes[size], options.partitions);
    // The stack shares this process: let the seeding's own aftermath (its answer, the garbage
    // of a large request body) pass before the DELETE is timed, for both sizes alike.
    await sleep(SETTLE_MS);
    const result = await letheDelete(context.api, TENANT, stream, context.readDeletion);
    return { stream, objects: sizes[size], ackMs: result.ackMs, completedMs: result.wallMs };
  };
  await one('small', -1); // warm-up, not counted
  for (let round = 0; round < options.ackStreams; round++) {
    const order = round % 2 === 0 ? (['small', 'large'] as const) : (['large', 'small'] as const);
    for (const size of order) samples[size].push(await one(size, round));
    log(
      `ack round ${round + 1}/${options.ackStreams}: small ${samples.small.at(-1)?.ackMs.toFixed(1)} ms, large ${samples.large.at(-1)?.ackMs.toFixed(1)} ms`,
    );
  }
  const ack = (size: 'small' | 'large') => samples[size].map((sample) => sample.ackMs);
  return {
    small: { objects: sizes.small, samples: samples.small, ackMs: summarize(ack('small')) },
    large: { objects: sizes.large, samples: samples.large, ackMs: summarize(ack('large')) },
    p50Ratio: percentile(ack('large'), 50) / percentile(ack('small'), 50),
    p95Ratio: percentile(ack('large'), 95) / percentile(ack('small'), 95),
  };
}
