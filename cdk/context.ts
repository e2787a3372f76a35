import { Duration } from 'aws-cdk-lib';
import type { Node } from 'constructs';
import type { LetheStackProps } from './lethe-stack.ts';

/** The stack's props from `-c key=value` (or cdk.json): every value arrives as a string. */
export function propsFromContext(node: Node): LetheStackProps {
  const text = (key: string) => {
    const value = node.tryGetContext(key) as unknown;
    return value === undefined || value === '' ? undefined : String(value);
  };
  const number = (key: string) => {
    const value = text(key);
    if (value === undefined) return undefined;
    if (!/^\d+$/.test(value))
      throw new Error(`context ${key} must be a whole number (got ${value})`);
    return Number(value);
  };
  const flag = (key: string) => {
    const value = text(key);
    if (value === undefined) return undefined;
    if (value !== 'true' && value !== 'false') {
      throw new Error(`context ${key} must be true or false (got ${value})`);
    }
    return value === 'true';
  };
  const maxDeletionAgeMinutes = number('maxDeletionAgeMinutes');
  const props: LetheStackProps = {
    bucketName: text('bucketName'),
    bucketKeyArn: text('bucketKeyArn'),
    dataRoot: text('dataRoot'),
    sweepIntervalMinutes: number('sweepIntervalMinutes'),
    staleAfterSeconds: number('staleAfterSeconds'),
    maxAttempts: number('maxAttempts'),
    workerConcurrency: number('workerConcurrency'),
    accountConcurrency: number('accountConcurrency'),
    maxKeysPerSecond: number('maxKeysPerSecond'),
    receiptRetentionDays: number('receiptRetentionDays'),
    defaultGraceSeconds: number('defaultGraceSeconds'),
    maxDeletionAge:
      maxDeletionAgeMinutes === undefined ? undefined : Duration.minutes(maxDeletionAgeMinutes),
    alarmEmail: text('alarmEmail'),
    apiLogging: flag('apiLogging'),
    apiCloudWatchRole: flag('apiCloudWatchRole'),
    certificateKeyVersion: number('certificateKeyVersion'),
    pageSize: number('pageSize'),
    maxRounds: number('maxRounds'),
    ingestGraceSeconds: number('ingestGraceSeconds'),
    maxEventsBytes: number('maxEventsBytes'),
    retryAfterSeconds: number('retryAfterSeconds'),
    offboardingPageSize: number('offboardingPageSize'),
  };
  // Absent keys keep the stack's documented defaults.
  return Object.fromEntries(
    Object.entries(props).filter(([, value]) => value !== undefined),
  ) as LetheStackProps;
}
