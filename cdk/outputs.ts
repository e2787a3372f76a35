import { CfnOutput } from 'aws-cdk-lib';
import type { LetheStack } from './lethe-stack.ts';

/** What a deployment tells its operator and the CLI (`lethe` reads `ApiUrl`). */
export function addOutputs(stack: LetheStack) {
  const output = (id: string, value: string, description?: string) =>
    new CfnOutput(stack, id, { value, ...(description ? { description } : {}) });
  output('ApiUrl', stack.api.url);
  output('BucketName', stack.bucket.bucketName);
  output('TableName', stack.table.tableName);
  output('WorkQueueUrl', stack.workQueue.queueUrl);
  output('DeadLetterQueueUrl', stack.deadLetterQueue.queueUrl);
  output('DispatchFailuresQueueUrl', stack.dispatchFailures.queueUrl);
  output('EventBusName', stack.events.bus.eventBusName);
  output('PlanQueueUrl', stack.plans.queue.queueUrl);
  output('PlanDeadLetterQueueUrl', stack.plans.deadLetterQueue.queueUrl);
  output('CertificateKeyArn', stack.certificateKey.key.keyArn);
  output('PublishFailuresQueueUrl', stack.events.failures.queueUrl);
  output('DashboardName', stack.monitoring.dashboard.dashboardName);
  output(
    'TenantInvokePolicyArn',
    stack.tenantAccess.policy.managedPolicyArn,
    `Attach to a principal tagged lethe-tenant=<tenant>: it may call only that tenant's routes`,
  );
  if (stack.monitoring.topic) output('AlarmTopicArn', stack.monitoring.topic.topicArn);
}
