import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { propsFromContext } from './context.ts';
import { LetheStack } from './lethe-stack.ts';

const app = new App();

new LetheStack(app, 'Lethe', {
  description: 'Lethe: deletes a stream of data from S3, durably and verifiably',
  ...propsFromContext(app.node),
});
// cdk-nag's AwsSolutions pack: synth fails on any finding the stack does not acknowledge.
Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
