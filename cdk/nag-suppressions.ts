import { type CfnElement, Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import type { LetheStack } from './lethe-stack.ts';

const acknowledge = (scope: IConstruct, id: string, reason: string) =>
  Validations.of(scope).acknowledge({ id: `AwsSolutions-${id}`, reason });

/**
 * The cdk-nag AwsSolutions findings Lethe accepts, each on the narrowest construct and with its
 * reason. Everything else the pack checks is fixed in the stack itself (encryption at rest,
 * TLS-only policies, blocked public access, PITR, access logs, DLQs).
 */
export function acknowledgeNagFindings(stack: LetheStack, options: { apiLogging: boolean }) {
  const arnOf = (construct: IConstruct) =>
    `<${stack.getLogicalId(construct.node.defaultChild as CfnElement)}.Arn>`;
  const dataRoot = stack.dataRoot;
  // An existing bucket (bucketName) appears in policies by its literal ARN.
  const bucketArn = stack.bucket.node.defaultChild
    ? arnOf(stack.bucket)
    : `arn:<AWS::Partition>:s3:::${stack.bucket.bucketName}`;

  for (const fn of Object.values(stack.functions)) {
    acknowledge(
      fn,
      'IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]',
      'AWSLambdaBasicExecutionRole grants only logs:CreateLogGroup, CreateLogStream and PutLogEvents, what every function needs to write its own log group.',
    );
    acknowledge(
      fn,
      'IAM5[Resource::*]',
      'X-Ray PutTraceSegments/PutTelemetryRecords and DynamoDB ListStreams (the dispatcher and publisher event sources) support no resource-level permissions; nothing else is granted on *.',
    );
  }
  // Every function that reads the table, the publisher (which reads only its stream) excepted.
  const { publisher: _publisher, ...tableReaders } = stack.functions;
  for (const fn of Object.values(tableReaders)) {
    acknowledge(
      fn,
      `IAM5[Resource::${arnOf(stack.table)}/index/*]`,
      "The indexes of Lethe's own table (the sweep index, a tenant's deletions by age); no other table is reachable, and the planner reaches plan partitions only.",
    );
  }
  for (const fn of [
    stack.functions.api,
    stack.functions.worker,
    stack.functions.dispatcher,
    stack.functions.sweeper,
  ]) {
    acknowledge(
      fn,
      `IAM5[Resource::${bucketArn}/${dataRoot}/*]`,
      `Every stream's objects live under the data root ${dataRoot}/ (the api writes them, the worker deletes them, whoever verifies a round aborts the multipart uploads in progress there): the wildcard is exactly the data Lethe manages, never the rest of the bucket.`,
    );
  }
  if (stack.bucket.node.defaultChild) {
    acknowledge(
      stack.bucket,
      'S1',
      "Deletions are audited by their receipts (exact counts, failed keys) and the API access logs (the caller's IAM ARN); S3 server access logs of a bucket that deletes millions of objects would log every key again. Turn on CloudTrail S3 data events or server access logs account-wide where the organization manages log destinations.",
    );
  }
  acknowledge(
    stack.dispatchFailures,
    'SQS3',
    "This queue is itself a dead-letter destination: the on-failure destination of the dispatcher's stream event source. cdk-nag only recognizes redrive-policy DLQs.",
  );
  acknowledge(
    stack.events.failures,
    'SQS3',
    "This queue is itself a dead-letter destination: the on-failure destination of the publisher's stream event source. cdk-nag only recognizes redrive-policy DLQs.",
  );
  acknowledge(
    stack.api,
    'APIG2',
    'The api function validates every request (names, deletion ids, JSON body, size) and answers the documented machine-readable 4xx codes; an API Gateway validator would answer with different codes than the local runtime and duplicate that contract.',
  );
  acknowledge(
    stack.api,
    'APIG3',
    'Every method requires IAM (SigV4): API Gateway rejects unsigned or unauthorized requests before they reach the function. A WAF web ACL can be associated by the account owner if the organization requires one.',
  );
  acknowledge(
    stack.api,
    'COG4',
    'Callers are IAM principals (SigV4), each limited to its own tenant by the TenantInvokePolicy; there are no end users and so no Cognito user pool.',
  );
  if (!options.apiLogging) {
    for (const id of ['APIG1', 'APIG6']) {
      acknowledge(
        stack.api,
        id,
        'API logging was turned off (apiLogging=false); the api function still logs every request with its deletion keys.',
      );
    }
  }
  acknowledge(
    stack.api,
    'IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]',
    "The account's API Gateway CloudWatch role (apiCloudWatchRole): AWS's policy for it, which lets API Gateway write the logs of the account's APIs and nothing else.",
  );
  acknowledge(
    stack.tenantAccess.policy,
    `IAM5[Resource::arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${stack.getLogicalId(stack.api.node.defaultChild as CfnElement)}>/<${stack.getLogicalId(stack.api.deploymentStage.node.defaultChild as CfnElement)}>/*/v1/tenants/<aws:PrincipalTag/lethe-tenant>/*]`,
    "The wildcard is the point of this policy: any method on any path under the caller's own tenant, named by its lethe-tenant principal tag.",
  );
}
