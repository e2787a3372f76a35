import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { PARTITIONS } from '../lib/store/layout.ts';

/** The reads the functions make (`lib/store/table.ts`), of the indexes too. */
const READ_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  // A transaction's check of an item it does not write: it changes nothing.
  'dynamodb:ConditionCheckItem',
] as const;

/** Conditional puts and updates, alone or in transactions (which IAM authorises item by item). */
const WRITE_ACTIONS = ['dynamodb:PutItem', 'dynamodb:UpdateItem'] as const;

/**
 * The calls the functions make on the table. No Scan, no DeleteItem, and no BatchWriteItem
 * (whose delete requests IAM cannot refuse apart from its puts): nothing leaves the table but
 * by TTL.
 */
export const TABLE_ACTIONS = [...READ_ACTIONS, ...WRITE_ACTIONS] as const;

/**
 * The partitions each function writes, from the store methods it calls (`lib/lambda/*`,
 * `lib/pipeline/wiring.ts`). Every one writes tenants' items: streams and deletions (receipts).
 */
export const TABLE_WRITES = {
  /**
   * Streams, deletion requests, cancels and retries; offboardings and their links (fan-out);
   * plans; the public keys of the certificates it signs. Never a deletion's own items (it reads
   * them for receipts) nor a key budget.
   */
  api: [PARTITIONS.tenants, PARTITIONS.offboardings, PARTITIONS.plans, PARTITIONS.certificateKeys],
  /**
   * Deletions it starts (their chains), the first page it deletes (key failures, the key
   * budget), verification (uploads), offboarding counts and fan-out, plans it starts.
   */
  dispatcher: [
    PARTITIONS.tenants,
    PARTITIONS.deletions,
    PARTITIONS.offboardings,
    PARTITIONS.plans,
    PARTITIONS.budgets,
  ],
  /** Pages (chains, key failures, the key budget) and verification (uploads, the receipt). */
  worker: [PARTITIONS.tenants, PARTITIONS.deletions, PARTITIONS.budgets],
  /**
   * Resumes and Stalled verdicts (chains, uploads), retention's requests, offboarding fan-out,
   * plans it sends again. It deletes no page, so no key budget.
   */
  sweeper: [PARTITIONS.tenants, PARTITIONS.deletions, PARTITIONS.offboardings, PARTITIONS.plans],
} as const;

/**
 * Lets a function make those calls on the table and its indexes; with `partitions`, only on
 * items whose partition key matches one of them (`dynamodb:LeadingKeys`, `*` a wildcard).
 */
export function grantTableUse(grantee: IGrantable, table: ITable, partitions?: readonly string[]) {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...TABLE_ACTIONS],
      resources: [table.tableArn, `${table.tableArn}/index/*`],
      ...(partitions ? { conditions: leadingKeys(partitions) } : {}),
    }),
  );
}

/**
 * Lets a function read any item of the table and its indexes, and write (put, update) only
 * items whose partition key matches one of `writes`.
 */
export function grantTableWrites(grantee: IGrantable, table: ITable, writes: readonly string[]) {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...READ_ACTIONS],
      resources: [table.tableArn, `${table.tableArn}/index/*`],
    }),
  );
  grantee.grantPrincipal.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...WRITE_ACTIONS],
      resources: [table.tableArn],
      conditions: leadingKeys(writes),
    }),
  );
}

const leadingKeys = (partitions: readonly string[]) => ({
  'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...partitions] },
});
