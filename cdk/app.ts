import { App } from 'aws-cdk-lib';
import { LetheStack } from './lethe-stack.ts';

const app = new App();
const context = (key: string) => app.node.tryGetContext(key) as string | undefined;
const number = (key: string) => (context(key) === undefined ? undefined : Number(context(key)));

new LetheStack(app, 'Lethe', {
  description: 'Lethe: deletes a stream of data from S3, durably and verifiably',
  bucketName: context('bucketName'),
  dataRoot: context('dataRoot'),
  sweepIntervalMinutes: number('sweepIntervalMinutes'),
  staleAfterSeconds: number('staleAfterSeconds'),
  maxAttempts: number('maxAttempts'),
  workerConcurrency: number('workerConcurrency'),
});
