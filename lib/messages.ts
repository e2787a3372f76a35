import { z } from 'zod';
import { InvalidMessageError } from './errors.ts';
import { NAME_PATTERN } from './names.ts';

/**
 * Work messages, version 1. A message names its deletion, generation and round, never a
 * prefix or a key: what to delete is always read from the deletion's own records, so a
 * forged or stale message cannot widen what is deleted.
 */
const fence = {
  v: z.literal(1),
  tenant: z.string().regex(NAME_PATTERN),
  deletionId: z.uuid(),
  generation: z.int().min(1),
  round: z.int().min(1),
};

export const PageMessage = z.strictObject({
  ...fence,
  type: z.literal('page'),
  chainId: z.string().regex(/^[0-9a-f]{20}$/),
  page: z.int().min(0),
});

export const FinalizeMessage = z.strictObject({
  ...fence,
  type: z.literal('finalize'),
});

export const WorkMessage = z.discriminatedUnion('type', [PageMessage, FinalizeMessage]);

export type PageMessage = z.infer<typeof PageMessage>;
export type FinalizeMessage = z.infer<typeof FinalizeMessage>;
export type WorkMessage = z.infer<typeof WorkMessage>;

export function parseWorkMessage(body: string): WorkMessage {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    throw new InvalidMessageError('work message is not JSON');
  }
  const result = WorkMessage.safeParse(json);
  if (!result.success) {
    throw new InvalidMessageError(`invalid work message: ${z.prettifyError(result.error)}`);
  }
  return result.data;
}

/** The fields that tie a message to one round of one deletion. */
export const fenceOf = (deletion: {
  tenant: string;
  deletionId: string;
  generation: number;
  round: number;
}) => ({
  v: 1 as const,
  tenant: deletion.tenant,
  deletionId: deletion.deletionId,
  generation: deletion.generation,
  round: deletion.round,
});
