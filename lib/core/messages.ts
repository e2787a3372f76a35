import { z } from 'zod';
import { InvalidMessageError } from './errors.ts';
import { CHAIN_ID_PATTERN, NAME_PATTERN } from './names.ts';
import type { ChainRecord, DeletionRecord } from './records.ts';

/**
 * Work messages, version 1. A message names its deletion, generation and round, never a
 * prefix or a key: what to delete is always read from the deletion's own records, so a
 * forged or stale message cannot widen what is deleted. `stream` only names the deletion in
 * log lines (written by newer senders, so it is optional).
 */
const fence = {
  v: z.literal(1),
  tenant: z.string().regex(NAME_PATTERN),
  stream: z.string().regex(NAME_PATTERN).optional(),
  deletionId: z.uuid(),
  generation: z.int().min(1),
  round: z.int().min(1),
};

export const PageMessage = z.strictObject({
  ...fence,
  type: z.literal('page'),
  chainId: z.string().regex(CHAIN_ID_PATTERN),
  page: z.int().min(0),
  /**
   * Set on a page S3 slowed down and that was sent back: the page after it was handed on
   * already, so the page's return does not hand it on again.
   */
  handedOn: z.literal(true).optional(),
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

type Fenced = Pick<DeletionRecord, 'tenant' | 'deletionId' | 'generation' | 'round'> & {
  stream?: string;
};

/** The fields that tie a message to one round of one deletion. */
const fenceOf = (owner: Fenced) => ({
  v: 1 as const,
  tenant: owner.tenant,
  ...(owner.stream ? { stream: owner.stream } : {}),
  deletionId: owner.deletionId,
  generation: owner.generation,
  round: owner.round,
});

/** The message for page `page` of a chain (the chain carries its deletion's fence). */
export const pageMessage = (chain: Fenced & Pick<ChainRecord, 'chainId'>, page: number) =>
  ({ ...fenceOf(chain), type: 'page', chainId: chain.chainId, page }) satisfies PageMessage;

/** The message that asks a worker to verify and finish a round. */
export const finalizeMessage = (deletion: Fenced) =>
  ({ ...fenceOf(deletion), type: 'finalize' }) satisfies FinalizeMessage;
