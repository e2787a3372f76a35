import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';

/**
 * The calls the functions make on the table (`lib/store/table.ts`): reads, queries (of the
 * indexes too), conditional puts and updates, transactions of them (which DynamoDB authorises
 * item by item, as these actions). No Scan, no DeleteItem, and no BatchWriteItem (whose delete
 * requests IAM cannot refuse apart from its puts): nothing leaves the table but by TTL.
 */
export const TABLE_ACTIONS = [
  'dynamodb:GetItem',
  'dynamodb:BatchGetItem',
  'dynamodb:Query',
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:ConditionCheckItem',
] as const;

/**
 * Lets a function make those calls on the table and its indexes; with `partitions`, only on
 * items whose partition key matches one of them (`dynamodb:LeadingKeys`, `*` a wildcard).
 */
export function grantTableUse(grantee: IGrantable, table: ITable, partitions?: readonly string[]) {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new PolicyStatement({
      actions: [...TABLE_ACTIONS],
      resources: [table.tableArn, `${table.tableArn}/index/*`],
      ...(partitions
        ? {
            conditions: {
              'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...partitions] },
            },
          }
        : {}),
    }),
  );
}
