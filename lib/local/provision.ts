import {
  CreateTableCommand,
  type CreateTableCommandInput,
  DescribeTableCommand,
  type DynamoDBClient,
  ResourceInUseException,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import {
  CreateEventBusCommand,
  type EventBridgeClient,
  ResourceAlreadyExistsException,
} from '@aws-sdk/client-eventbridge';
import type { KeySpec, KeyUsageType, KMSClient } from '@aws-sdk/client-kms';
import { CreateBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  QueueDoesNotExist,
  SetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { createKey } from './kms-key.ts';
import { type CfnTemplate, rateSeconds, resolver, resourcesOfType } from './template.ts';

export interface LocalQueue {
  logicalId: string;
  url: string;
  arn: string;
  visibilityTimeoutSeconds: number;
  /** Its redrive policy's dead-letter queue, if it has one. */
  deadLetterArn?: string;
}

export interface LocalFunction {
  logicalId: string;
  /** Handler file, from the function's `lethe:entry` metadata. */
  entry: string;
  environment: Record<string, string>;
  timeoutSeconds: number;
  /** What Lambda does with a recursive loop (`RecursiveLoop`, default Terminate). */
  recursiveLoop: 'Allow' | 'Terminate';
}

export interface LocalEventSource {
  functionId: string;
  kind: 'sqs' | 'dynamodb';
  sourceArn: string;
  batchSize: number;
  /** Batches of one shard at once (a stream's `ParallelizationFactor`). @default 1 */
  parallelizationFactor?: number;
  maxConcurrency?: number;
  reportBatchItemFailures: boolean;
  filters: string[];
  bisectOnError: boolean;
  maxRetries: number;
  onFailureArn?: string;
}

export interface LocalResources {
  tableName: string;
  streamArn: string;
  bucket: string;
  /** Event buses, by name. */
  buses: string[];
  queues: LocalQueue[];
  functions: LocalFunction[];
  eventSources: LocalEventSource[];
  schedules: Array<{ functionId: string; intervalSeconds: number }>;
}

export interface ProvisionClients {
  dynamodb: DynamoDBClient;
  sqs: SQSClient;
  s3: S3Client;
  eventbridge: EventBridgeClient;
  kms: KMSClient;
}

/** `WorkBF636A8B` -> `work`: logical ids without CDK's hash, for readable local names. */
const baseName = (logicalId: string) =>
  logicalId
    .replace(/[0-9A-F]{8}$/, '')
    .replace(/([a-z0-9])([A-Z])/g, '$1-$2')
    .toLowerCase();

const ACCOUNT = '123456789012';

/**
 * Creates in the emulator what the template declares (the table with its stream and index, the
 * queues with their redrive policy, the bucket), or finds it from an earlier run.
 */
export async function provision(
  template: CfnTemplate,
  clients: ProvisionClients,
  options: { namePrefix: string; region: string; visibilityTimeoutSeconds?: number },
): Promise<LocalResources> {
  const { namePrefix, region } = options;
  const refs: Record<string, string> = {};
  const arns: Record<string, string> = {};

  const [table] = resourcesOfType(template, 'AWS::DynamoDB::Table');
  if (!table) throw new Error('the template has no table');
  const tableName = `${namePrefix}-${baseName(table.logicalId)}`;
  const streamArn = await createTable(clients.dynamodb, tableName, table.properties);
  refs[table.logicalId] = tableName;
  arns[table.logicalId] = `arn:aws:dynamodb:${region}:${ACCOUNT}:table/${tableName}`;

  const queueResources = resourcesOfType(template, 'AWS::SQS::Queue');
  // Queues without a redrive policy first: they are the targets of the others.
  queueResources.sort(
    (a, b) => Number('RedrivePolicy' in a.properties) - Number('RedrivePolicy' in b.properties),
  );
  const queues: LocalQueue[] = [];
  for (const { logicalId, properties } of queueResources) {
    const resolve = resolver(refs, arns);
    const name = `${namePrefix}-${baseName(logicalId)}`;
    const attributes: Record<string, string> = {};
    const visibility = Number(
      options.visibilityTimeoutSeconds ?? properties.VisibilityTimeout ?? 30,
    );
    attributes.VisibilityTimeout = String(visibility);
    if (properties.MessageRetentionPeriod) {
      attributes.MessageRetentionPeriod = String(properties.MessageRetentionPeriod);
    }
    const redrive = properties.RedrivePolicy
      ? (resolve(properties.RedrivePolicy) as { deadLetterTargetArn?: string })
      : undefined;
    if (redrive) attributes.RedrivePolicy = JSON.stringify(redrive);
    const url = await createQueue(clients.sqs, name, attributes);
    const { Attributes } = await clients.sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }),
    );
    refs[logicalId] = url;
    arns[logicalId] = Attributes?.QueueArn ?? `arn:aws:sqs:${region}:${ACCOUNT}:${name}`;
    queues.push({
      logicalId,
      url,
      arn: arns[logicalId],
      visibilityTimeoutSeconds: visibility,
      ...(redrive?.deadLetterTargetArn ? { deadLetterArn: redrive.deadLetterTargetArn } : {}),
    });
  }

  // Event buses (the name is the stack's, prefixed: `lethe-...`, so a test can find it).
  const buses: string[] = [];
  for (const { logicalId } of resourcesOfType(template, 'AWS::Events::EventBus')) {
    const name = `${namePrefix}-${baseName(logicalId)}`;
    await createEventBus(clients.eventbridge, name);
    refs[logicalId] = name;
    arns[logicalId] = `arn:aws:events:${region}:${ACCOUNT}:event-bus/${name}`;
    buses.push(name);
  }

  // KMS keys (the certificate signer), found again by an alias of the stack's name.
  for (const { logicalId, properties } of resourcesOfType(template, 'AWS::KMS::Key')) {
    const key = await createKey(clients.kms, `alias/${namePrefix}-${baseName(logicalId)}`, {
      KeySpec: (properties.KeySpec ?? 'SYMMETRIC_DEFAULT') as KeySpec,
      KeyUsage: (properties.KeyUsage ?? 'ENCRYPT_DECRYPT') as KeyUsageType,
    });
    refs[logicalId] = key.keyId;
    arns[logicalId] = key.arn;
  }

  const [bucketResource] = resourcesOfType(template, 'AWS::S3::Bucket');
  let bucket = bucketResource ? `${namePrefix}-${baseName(bucketResource.logicalId)}` : '';
  if (bucketResource) {
    refs[bucketResource.logicalId] = bucket;
    arns[bucketResource.logicalId] = `arn:aws:s3:::${bucket}`;
  }

  const resolve = resolver(refs, arns);
  const functions: LocalFunction[] = resourcesOfType(template, 'AWS::Lambda::Function').map(
    ({ logicalId, properties, resource }) => {
      const variables = ((properties.Environment as { Variables?: object })?.Variables ??
        {}) as Record<string, unknown>;
      return {
        logicalId,
        entry: String(resource.Metadata?.['lethe:entry'] ?? ''),
        environment: Object.fromEntries(
          Object.entries(variables).map(([key, value]) => [key, String(resolve(value))]),
        ),
        timeoutSeconds: Number(properties.Timeout ?? 3),
        recursiveLoop: properties.RecursiveLoop === 'Allow' ? 'Allow' : 'Terminate',
      };
    },
  );
  // An existing bucket given by name reaches the functions only through their environment.
  bucket ||=
    functions.find((fn) => fn.environment.LETHE_BUCKET_NAME)?.environment.LETHE_BUCKET_NAME ?? '';
  await createBucket(clients.s3, bucket);

  const eventSources: LocalEventSource[] = resourcesOfType(
    template,
    'AWS::Lambda::EventSourceMapping',
  ).map(({ properties }) => {
    const functionId = (properties.FunctionName as { Ref: string }).Ref;
    const source = properties.EventSourceArn as { 'Fn::GetAtt': [string, string] };
    const [sourceId, attribute] = source['Fn::GetAtt'];
    const kind = attribute === 'StreamArn' ? 'dynamodb' : 'sqs';
    const onFailure = (properties.DestinationConfig as { OnFailure?: { Destination: unknown } })
      ?.OnFailure?.Destination;
    const filters = (
      (properties.FilterCriteria as { Filters?: Array<{ Pattern: string }> })?.Filters ?? []
    ).map((filter) => filter.Pattern);
    const scaling = properties.ScalingConfig as { MaximumConcurrency: number } | undefined;
    return {
      functionId,
      kind,
      sourceArn: kind === 'dynamodb' ? streamArn : (arns[sourceId] ?? ''),
      batchSize: Number(properties.BatchSize ?? 10),
      parallelizationFactor: Number(properties.ParallelizationFactor ?? 1),
      ...(scaling ? { maxConcurrency: Number(scaling.MaximumConcurrency) } : {}),
      reportBatchItemFailures: (
        (properties.FunctionResponseTypes as string[] | undefined) ?? []
      ).includes('ReportBatchItemFailures'),
      filters,
      bisectOnError: properties.BisectBatchOnFunctionError === true,
      maxRetries: Number(properties.MaximumRetryAttempts ?? 10_000),
      ...(onFailure ? { onFailureArn: String(resolve(onFailure)) } : {}),
    };
  });

  const schedules = resourcesOfType(template, 'AWS::Events::Rule').flatMap(({ properties }) => {
    const seconds = rateSeconds(String(properties.ScheduleExpression ?? ''));
    const targets =
      (properties.Targets as Array<{ Arn: { 'Fn::GetAtt': [string, string] } }>) ?? [];
    return targets.map((target) => ({
      functionId: target.Arn['Fn::GetAtt'][0],
      intervalSeconds: seconds,
    }));
  });

  return { tableName, streamArn, bucket, buses, queues, functions, eventSources, schedules };
}

async function createTable(
  client: DynamoDBClient,
  tableName: string,
  properties: Record<string, unknown>,
): Promise<string> {
  const input = {
    TableName: tableName,
    KeySchema: properties.KeySchema,
    AttributeDefinitions: properties.AttributeDefinitions,
    BillingMode: 'PAY_PER_REQUEST',
    StreamSpecification: { StreamEnabled: true, ...(properties.StreamSpecification as object) },
    ...(properties.GlobalSecondaryIndexes
      ? { GlobalSecondaryIndexes: properties.GlobalSecondaryIndexes }
      : {}),
  } as CreateTableCommandInput;
  try {
    await client.send(new CreateTableCommand(input));
    const ttl = properties.TimeToLiveSpecification as { AttributeName?: string } | undefined;
    if (ttl?.AttributeName) {
      await client.send(
        new UpdateTimeToLiveCommand({
          TableName: tableName,
          TimeToLiveSpecification: { AttributeName: ttl.AttributeName, Enabled: true },
        }),
      );
    }
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
  if (!Table?.LatestStreamArn) throw new Error(`table ${tableName} has no stream`);
  return Table.LatestStreamArn;
}

async function createQueue(client: SQSClient, name: string, attributes: Record<string, string>) {
  try {
    const { QueueUrl } = await client.send(new GetQueueUrlCommand({ QueueName: name }));
    if (QueueUrl) {
      await client.send(new SetQueueAttributesCommand({ QueueUrl, Attributes: attributes }));
      return QueueUrl;
    }
  } catch (error) {
    if (!(error instanceof QueueDoesNotExist)) throw error;
  }
  const { QueueUrl } = await client.send(
    new CreateQueueCommand({ QueueName: name, Attributes: attributes }),
  );
  if (!QueueUrl) throw new Error(`queue ${name} has no URL`);
  return QueueUrl;
}

async function createEventBus(client: EventBridgeClient, name: string) {
  try {
    await client.send(new CreateEventBusCommand({ Name: name }));
  } catch (error) {
    if (!(error instanceof ResourceAlreadyExistsException)) throw error;
  }
}

async function createBucket(client: S3Client, bucket: string) {
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    const name = (error as Error).name;
    if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') throw error;
  }
}
