import { Capture, Match } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { DISPATCH_BATCH_SIZE, DISPATCH_PARALLELIZATION } from '../../cdk/event-sources.ts';
import { ROUTES } from '../../lib/api/routes.ts';
import { REGISTRATION_HOLD_SECONDS } from '../../lib/store/deletion-changes.ts';
import { ENV, REQUIRED_SETTINGS } from '../../lib/support/index.ts';
import { allowedActions, allowStatements, allows, roleId } from './iam.ts';
import {
  ENTRIES,
  eventSourceOf,
  FUNCTION_NAMES,
  FUNCTIONS_BUT_PUBLISHER,
  type FunctionName,
  getAtt,
  logicalId,
  methodRoutes,
  ref,
  resourceById,
  resourcesOfType,
  synthesize,
  targetOf,
  toNumber,
} from './template.ts';

// Prepare: one stack with every default and one with every prop set, synthesized once per file.
const defaults = synthesize();
const CUSTOM = {
  bucketName: 'existing-data',
  maxReceiveCount: 3,
  sweepIntervalMinutes: 15,
  workerConcurrency: 7,
} as const;
const custom = synthesize(CUSTOM);

describe.each([
  { stack: 'defaults', synthesized: defaults, maxReceiveCount: 5 },
  { stack: 'maxReceiveCount: 3', synthesized: custom, maxReceiveCount: 3 },
])('work queue with $stack', ({ synthesized, maxReceiveCount }) => {
  it(`moves a message to the dead-letter queue after ${maxReceiveCount} receives`, () => {
    // Act
    const workQueue = resourceById(synthesized.template, synthesized.workQueueId);

    // Assess
    expect(synthesized.deadLetterQueueId).not.toBe(synthesized.workQueueId);
    expect(workQueue.Properties?.RedrivePolicy).toEqual({
      deadLetterTargetArn: getAtt(synthesized.deadLetterQueueId, 'Arn'),
      maxReceiveCount,
    });
  });
});

describe('worker event source', () => {
  const { template } = defaults;

  it('consumes the work queue', () => {
    // Act
    const mapping = eventSourceOf(template, 'worker');

    // Assess
    expect(mapping.EventSourceArn).toEqual(getAtt(defaults.workQueueId, 'Arn'));
  });

  it('hides a message for at least six times the worker timeout', () => {
    // Act
    const workerTimeout = new Capture();
    template.hasResource('AWS::Lambda::Function', {
      Metadata: { 'lethe:entry': ENTRIES.worker },
      Properties: { Timeout: workerTimeout },
    });
    const queue = resourceById(
      template,
      targetOf(eventSourceOf(template, 'worker').EventSourceArn),
    );

    // Assess
    expect(toNumber(queue.Properties?.VisibilityTimeout)).toBeGreaterThanOrEqual(
      6 * workerTimeout.asNumber(),
    );
  });

  it('gives the worker and the dispatcher a full vCPU (1,769 MB), the other functions the 256 MB default', () => {
    // Assess: BENCHMARKS.md ("Memory") sizes the worker by CPU: a listing's parse is on every chain link.
    const memoryOf = (entry: string) => {
      const memory = new Capture();
      template.hasResource('AWS::Lambda::Function', {
        Metadata: { 'lethe:entry': entry },
        Properties: { MemorySize: memory },
      });
      return memory.asNumber();
    };
    // The dispatcher lists and deletes the first page of every round it starts.
    expect(memoryOf(ENTRIES.worker)).toBe(1769);
    expect(memoryOf(ENTRIES.dispatcher)).toBe(1769);
    for (const fn of ['api', 'sweeper'] as const) {
      expect(memoryOf(ENTRIES[fn])).toBe(256);
    }
  });

  it('reports partial batch failures', () => {
    // Assess
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: ref(defaults.fn('worker')),
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });

  it('takes batches of 1 to 10 messages', () => {
    // Act
    const batchSize = toNumber(eventSourceOf(template, 'worker').BatchSize);

    // Assess: more than 10 would need a batching window, which the worker does not set.
    expect(Number.isInteger(batchSize)).toBe(true);
    expect(batchSize).toBeGreaterThanOrEqual(1);
    expect(batchSize).toBeLessThanOrEqual(10);
  });

  it.each([
    { stack: 'defaults', synthesized: defaults, concurrency: 20 },
    { stack: 'workerConcurrency: 7', synthesized: custom, concurrency: CUSTOM.workerConcurrency },
  ])('runs at most $concurrency workers with $stack', ({ synthesized, concurrency }) => {
    // Assess
    synthesized.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: ref(synthesized.fn('worker')),
      ScalingConfig: { MaximumConcurrency: concurrency },
    });
  });
});

describe('dispatcher event source', () => {
  const { template } = defaults;
  const dispatcher = () => ref(defaults.fn('dispatcher'));

  it("reads the table's stream from TRIM_HORIZON", () => {
    // Assess
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: dispatcher(),
      EventSourceArn: getAtt(defaults.tableId, 'StreamArn'),
      StartingPosition: 'TRIM_HORIZON',
    });
  });

  it('lets through only PENDING deletions and plans, completions, and offboarding steps', () => {
    // Act
    const captures = [new Capture(), new Capture(), new Capture()];
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: dispatcher(),
      FilterCriteria: { Filters: captures.map((pattern) => ({ Pattern: pattern })) },
    });
    const patterns = captures.map(
      (pattern) => JSON.parse(pattern.asString()) as { eventName: string[] },
    );

    // Assess
    expect(patterns.map(({ eventName }) => [...eventName].sort())).toEqual([
      ['INSERT', 'MODIFY'],
      ['MODIFY'],
      ['INSERT', 'MODIFY'],
    ]);
    expect(patterns.map(({ eventName: _, ...rest }) => rest)).toEqual([
      { dynamodb: { NewImage: { type: { S: ['DELETION', 'PLAN'] }, state: { S: ['PENDING'] } } } },
      // A COMPLETED deletion that an offboarding took in: no other deletion invokes it.
      {
        dynamodb: {
          NewImage: {
            type: { S: ['DELETION'] },
            state: { S: ['COMPLETED'] },
            offboardingId: { S: [{ exists: true }] },
          },
        },
      },
      {
        dynamodb: {
          NewImage: {
            type: { S: ['OFFBOARDING'] },
            state: { S: ['RUNNING'] },
            fannedOut: { BOOL: [false] },
            // A step's own write, not each stream the step takes in (which clears it).
            fanoutDue: { BOOL: [true] },
          },
        },
      },
    ]);
  });

  it('splits a failing batch to isolate the bad record', () => {
    // Assess
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: dispatcher(),
      BisectBatchOnFunctionError: true,
    });
  });

  it('takes up to 100 stream records a batch, so deletions asked at once dispatch side by side', () => {
    // Act
    const batchSize = toNumber(eventSourceOf(template, 'dispatcher').BatchSize);

    // Assess
    expect(batchSize).toBe(DISPATCH_BATCH_SIZE);
    expect(batchSize).toBeGreaterThanOrEqual(40);
  });

  it("takes up to 10 batches of the table's stream at once: a tenant's deletions do not wait in line", () => {
    // Act
    const factor = toNumber(eventSourceOf(template, 'dispatcher').ParallelizationFactor);

    // Assess
    expect(factor).toBe(DISPATCH_PARALLELIZATION);
    expect(factor).toBe(10);
  });

  it('gives up on a record after a bounded number of retries', () => {
    // Act: absent or -1 means retrying until the record expires.
    const retries = toNumber(eventSourceOf(template, 'dispatcher').MaximumRetryAttempts);

    // Assess
    expect(retries).toBeGreaterThanOrEqual(0);
    expect(retries).toBeLessThanOrEqual(10);
  });

  it('sends records that exhaust their retries to the DispatchFailures queue', () => {
    // Assess
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: dispatcher(),
      DestinationConfig: { OnFailure: { Destination: getAtt(defaults.dispatchFailuresId, 'Arn') } },
    });
  });

  it('reports partial batch failures', () => {
    // Assess
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: dispatcher(),
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });
});

describe('table', () => {
  it.each([
    {
      property: 'a stream of new and old images (the publisher tells what changed)',
      expected: { StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' } },
    },
    {
      property: 'point-in-time recovery',
      expected: { PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } },
    },
    {
      property: 'pk and sk keys',
      expected: {
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
      },
    },
    {
      property: 'the sweep index on sweepPk and sweepSk',
      expected: {
        GlobalSecondaryIndexes: Match.arrayWith([
          Match.objectLike({
            IndexName: 'sweep',
            KeySchema: [
              { AttributeName: 'sweepPk', KeyType: 'HASH' },
              { AttributeName: 'sweepSk', KeyType: 'RANGE' },
            ],
          }),
        ]),
      },
    },
    {
      property: 'expiry on expiresAt',
      expected: { TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true } },
    },
    { property: 'encryption at rest', expected: { SSESpecification: { SSEEnabled: true } } },
    {
      property: 'deletion protection (a console or API delete fails too)',
      expected: { DeletionProtectionEnabled: true },
    },
  ])('has $property', ({ expected }) => {
    // Assess
    defaults.template.resourceCountIs('AWS::DynamoDB::Table', 1);
    defaults.template.hasResourceProperties('AWS::DynamoDB::Table', expected);
  });
});

describe('table retention', () => {
  it('keeps the table when the stack is deleted or the table replaced', () => {
    // Assess
    defaults.template.hasResource('AWS::DynamoDB::Table', {
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });
});

describe('publisher', () => {
  const { template, stack } = defaults;
  const busArn = getAtt(logicalId(stack, stack.events.bus), 'Arn');
  const failuresArn = getAtt(logicalId(stack, stack.events.failures), 'Arn');

  it('may put events on the bus of the stack, and on no other', () => {
    // Act
    const puts = allowStatements(template, 'publisher').filter((statement) =>
      allows([statement.Action ?? []].flat(), 'events:*'),
    );

    // Assess
    expect(puts).toEqual([
      expect.objectContaining({ Action: 'events:PutEvents', Resource: busArn }),
    ]);
  });

  it.each([
    's3:*',
    'dynamodb:GetItem',
    'dynamodb:Query',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:BatchWriteItem',
    'kms:*',
  ])('may not use %s', (action) => {
    // Assess: it reads only the images of the table's stream
    expect(allows(allowedActions(template, 'publisher'), action)).toBe(false);
  });

  it('may send only to its own failure queue', () => {
    // Act
    const sends = allowStatements(template, 'publisher').filter((statement) =>
      allows([statement.Action ?? []].flat(), 'sqs:SendMessage'),
    );

    // Assess
    expect(sends.map((statement) => statement.Resource)).toEqual([failuresArn]);
  });

  it("reads the table's stream from TRIM_HORIZON, a batch of 25 at a time, one batch per shard (in order)", () => {
    // Act
    const mapping = eventSourceOf(template, 'publisher');

    // Assess
    expect(mapping).toMatchObject({
      EventSourceArn: getAtt(defaults.tableId, 'StreamArn'),
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 25,
    });
    expect(mapping.ParallelizationFactor ?? 1).toBe(1);
  });

  it('lets through inserts and changes of deletions and offboardings only', () => {
    // Act
    const filters = (
      eventSourceOf(template, 'publisher').FilterCriteria as {
        Filters: { Pattern: string }[];
      }
    ).Filters;

    // Assess: no REMOVE (TTL), no chain, stream or plan item
    expect(filters.map((filter) => JSON.parse(filter.Pattern))).toEqual([
      {
        eventName: ['INSERT', 'MODIFY'],
        dynamodb: { NewImage: { type: { S: ['DELETION', 'OFFBOARDING'] } } },
      },
    ]);
  });

  it('splits a failing batch, retries a record 10 times, reports partial failures, then sends it to PublishFailures', () => {
    // Act
    const mapping = eventSourceOf(template, 'publisher');

    // Assess
    expect(mapping).toMatchObject({
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      DestinationConfig: { OnFailure: { Destination: failuresArn } },
    });
  });
});

describe('plan queue and planner', () => {
  const planQueueId = logicalId(defaults.stack, defaults.stack.plans.queue);
  const planDeadLettersId = logicalId(defaults.stack, defaults.stack.plans.deadLetterQueue);

  it('moves a plan page to its own dead-letter queue after 5 receives', () => {
    // Act
    const queue = resourceById(defaults.template, planQueueId);

    // Assess
    expect(planDeadLettersId).not.toBe(defaults.deadLetterQueueId);
    expect(queue.Properties?.RedrivePolicy).toEqual({
      deadLetterTargetArn: getAtt(planDeadLettersId, 'Arn'),
      maxReceiveCount: 5,
    });
  });

  it('keeps a dead plan page two weeks', () => {
    // Assess
    expect(
      resourceById(defaults.template, planDeadLettersId).Properties?.MessageRetentionPeriod,
    ).toBe(14 * 86_400);
  });

  it.each(['dispatcher', 'sweeper'] as const)(
    'lets the %s run no longer than a round registered chain by chain is held for it',
    (fn) => {
      // Act
      const timeout = toNumber(
        resourceById(defaults.template, defaults.fn(fn)).Properties?.Timeout,
      );

      // Assess: past the hold, another call takes the round over, its holder having ended
      expect(timeout).toBeLessThanOrEqual(REGISTRATION_HOLD_SECONDS);
    },
  );

  it('hides a plan page for at least six times the planner timeout', () => {
    // Act
    const timeout = toNumber(
      resourceById(defaults.template, defaults.fn('planner')).Properties?.Timeout,
    );

    // Assess
    expect(
      toNumber(resourceById(defaults.template, planQueueId).Properties?.VisibilityTimeout),
    ).toBeGreaterThanOrEqual(6 * timeout);
  });

  it('consumes the plan queue in batches of 1 to 10, reporting partial batch failures', () => {
    // Act
    const mapping = eventSourceOf(defaults.template, 'planner');

    // Assess
    expect(mapping.EventSourceArn).toEqual(getAtt(planQueueId, 'Arn'));
    expect(mapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(toNumber(mapping.BatchSize)).toBeGreaterThanOrEqual(1);
    expect(toNumber(mapping.BatchSize)).toBeLessThanOrEqual(10);
  });

  it.each([
    { stack: 'defaults', synthesized: defaults, concurrency: 20 },
    { stack: 'workerConcurrency: 7', synthesized: custom, concurrency: CUSTOM.workerConcurrency },
  ])('runs at most $concurrency planners with $stack', ({ synthesized, concurrency }) => {
    // Assess
    expect(eventSourceOf(synthesized.template, 'planner').ScalingConfig).toEqual({
      MaximumConcurrency: concurrency,
    });
  });
});

describe('sweep schedule', () => {
  it.each([
    { stack: 'defaults', synthesized: defaults, expression: 'rate(5 minutes)' },
    { stack: 'sweepIntervalMinutes: 15', synthesized: custom, expression: 'rate(15 minutes)' },
  ])('runs the sweeper on $expression with $stack', ({ synthesized, expression }) => {
    // Assess
    synthesized.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: expression,
      State: 'ENABLED',
      Targets: [Match.objectLike({ Arn: getAtt(synthesized.fn('sweeper'), 'Arn') })],
    });
  });

  it('lets EventBridge invoke the sweeper from that rule only', () => {
    // Act
    const ruleIds = resourcesOfType(defaults.template, 'AWS::Events::Rule').map(([id]) => id);

    // Assess
    expect(ruleIds).toHaveLength(1);
    defaults.template.hasResourceProperties('AWS::Lambda::Permission', {
      Action: 'lambda:InvokeFunction',
      FunctionName: getAtt(defaults.fn('sweeper'), 'Arn'),
      Principal: 'events.amazonaws.com',
      SourceArn: getAtt(ruleIds[0] ?? '', 'Arn'),
    });
  });
});

describe('REST API', () => {
  const methods = resourcesOfType(defaults.template, 'AWS::ApiGateway::Method');
  const routes = methodRoutes(defaults.template);

  it.each(
    methods.map(([, method], index) => ({
      route: routes[index],
      authorization: method.Properties?.AuthorizationType,
    })),
  )('requires IAM (SigV4) on $route', ({ authorization }) => {
    // Assess
    expect(authorization).toBe('AWS_IAM');
  });

  it('serves exactly the routes in ROUTES', () => {
    // Act
    const expected = ROUTES.map((route) => `${route.method} ${route.resource}`);

    // Assess
    expect([...routes].sort()).toEqual([...expected].sort());
  });

  it('passes every request body to the function as the bytes sent (binary media types */*)', () => {
    // Assess: without it, API Gateway hands the function a UTF-8 string, bad bytes mended
    defaults.template.hasResourceProperties('AWS::ApiGateway::RestApi', {
      BinaryMediaTypes: ['*/*'],
    });
  });
});

describe('least privilege', () => {
  const { template } = defaults;

  it.each([
    { fn: 'api', action: 's3:PutObject' },
    { fn: 'worker', action: 's3:DeleteObject' },
    // It deletes the first page of a round, which it lists to lay the round out.
    { fn: 'dispatcher', action: 's3:DeleteObject' },
  ] as const)('lets the $fn function use $action', ({ fn, action }) => {
    // Act
    const actions = allowedActions(template, fn);

    // Assess
    expect(allows(actions, action)).toBe(true);
  });

  it.each([
    { fn: 'api', family: 's3:DeleteObject*' },
    { fn: 'worker', family: 's3:PutObject*' },
    { fn: 'dispatcher', family: 's3:PutObject*' },
    { fn: 'sweeper', family: 's3:PutObject*' },
    { fn: 'sweeper', family: 's3:DeleteObject*' },
    // A plan lists and counts: it can neither change nor abort anything.
    { fn: 'planner', family: 's3:PutObject*' },
    { fn: 'planner', family: 's3:DeleteObject*' },
    { fn: 'planner', family: 's3:AbortMultipartUpload' },
    { fn: 'planner', family: 's3:RestoreObject' },
  ] as const)('denies the $fn function every $family action', ({ fn, family }) => {
    // Act
    const actions = allowedActions(template, fn);

    // Assess
    expect(actions.filter((action) => allows([action], family))).toEqual([]);
  });

  it.each(['worker', 'dispatcher'] as const)(
    'lets the %s delete only under the data root',
    (fn) => {
      // Act
      const deletes = allowStatements(template, fn).filter((statement) =>
        allows([statement.Action ?? []].flat(), 's3:DeleteObject*'),
      );

      // Assess
      expect(deletes.length).toBeGreaterThan(0);
      for (const statement of deletes) {
        expect(statement.Resource).toEqual({
          'Fn::Join': [
            '',
            [getAtt(logicalId(defaults.stack, defaults.stack.bucket), 'Arn'), '/streams/*'],
          ],
        });
      }
    },
  );

  it.each(FUNCTION_NAMES)('gives the %s role no managed policy but basic execution', (fn) => {
    // Act: AWS managed policies cannot be read from the template, so only this one is allowed.
    const role = resourceById(template, roleId(template, fn));

    // Assess
    expect(role.Properties?.ManagedPolicyArns).toEqual([
      {
        'Fn::Join': [
          '',
          [
            'arn:',
            { Ref: 'AWS::Partition' },
            ':iam::aws:policy/service-role/AWSLambdaBasicExecutionRole',
          ],
        ],
      },
    ]);
  });
});

describe('api function', () => {
  it("answers within API Gateway's 29-second integration timeout", () => {
    // Act
    const timeout = toNumber(
      resourceById(defaults.template, defaults.fn('api')).Properties?.Timeout,
    );

    // Assess: longer, and the caller gets a 504 while the request goes on
    expect(timeout).toBeLessThanOrEqual(29);
  });
});

describe('functions', () => {
  it.each(
    resourcesOfType(defaults.template, 'AWS::Lambda::Function').map(([id, fn]) => ({
      id,
      runtime: fn.Properties?.Runtime,
    })),
  )('runs $id on Node.js 22 or newer', ({ runtime }) => {
    // Act
    const major = /^nodejs(\d+)\.x$/.exec(String(runtime))?.[1];

    // Assess
    expect(major, `runtime ${String(runtime)}`).toBeDefined();
    expect(Number(major)).toBeGreaterThanOrEqual(22);
  });
});

describe('outputs', () => {
  const { stack } = defaults;

  it.each([
    { name: 'ApiUrl', value: stack.resolve(stack.api.url) },
    { name: 'BucketName', value: ref(logicalId(stack, stack.bucket)) },
    { name: 'TableName', value: ref(defaults.tableId) },
    { name: 'WorkQueueUrl', value: ref(defaults.workQueueId) },
    { name: 'DeadLetterQueueUrl', value: ref(defaults.deadLetterQueueId) },
    { name: 'DispatchFailuresQueueUrl', value: ref(defaults.dispatchFailuresId) },
  ])('exports $name', ({ name, value }) => {
    // Assess
    defaults.template.hasOutput(name, { Value: value });
  });
});

describe('existing bucket (bucketName)', () => {
  it('creates no bucket', () => {
    // Assess
    custom.template.resourceCountIs('AWS::S3::Bucket', 0);
    custom.template.resourceCountIs('AWS::S3::BucketPolicy', 0);
  });

  it.each(FUNCTIONS_BUT_PUBLISHER)('gives the %s function the bucket name', (fn) => {
    // Assess
    custom.template.hasResource('AWS::Lambda::Function', {
      Metadata: { 'lethe:entry': ENTRIES[fn] },
      Properties: { Environment: { Variables: { [ENV.bucket]: CUSTOM.bucketName } } },
    });
  });

  it('exports the bucket name', () => {
    // Assess
    custom.template.hasOutput('BucketName', { Value: CUSTOM.bucketName });
  });

  it('asks that bucket whether it keeps versions (no LETHE_BUCKET_VERSIONING=off)', () => {
    // Assess
    custom.template.hasResource('AWS::Lambda::Function', {
      Metadata: { 'lethe:entry': ENTRIES.dispatcher },
      Properties: {
        Environment: { Variables: Match.objectLike({ [ENV.bucketVersioning]: Match.absent() }) },
      },
    });
  });
});

describe('bucket versioning', () => {
  it.each(['dispatcher', 'sweeper'] as const)(
    'tells the %s that the bucket of the stack keeps no versions',
    (fn) => {
      // Assess
      defaults.template.hasResource('AWS::Lambda::Function', {
        Metadata: { 'lethe:entry': ENTRIES[fn] },
        Properties: {
          Environment: { Variables: Match.objectLike({ [ENV.bucketVersioning]: 'off' }) },
        },
      });
    },
  );
});

describe('stateful resources', () => {
  // A changed logical ID makes CloudFormation replace the resource: a new table has none of the
  // tombstones and receipts, a new queue none of the work. Moving a construct in the code
  // (another file, another parent) must keep these.
  it.each([
    ['TableCD117FA1', 'AWS::DynamoDB::Table'],
    ['Data666C94C7', 'AWS::S3::Bucket'],
    ['WorkBF636A8B', 'AWS::SQS::Queue'],
    ['WorkDeadLetters429E96E8', 'AWS::SQS::Queue'],
    ['DispatchFailures307D4E2D', 'AWS::SQS::Queue'],
    ['PlansPages6BC101FC', 'AWS::SQS::Queue'],
    ['PlansDeadLettersC2A9FAC0', 'AWS::SQS::Queue'],
    ['EventsPublishFailuresC403B9DB', 'AWS::SQS::Queue'],
    ['CertificatesKeyD37B64AC', 'AWS::KMS::Key'],
  ])('keeps the logical ID %s (%s)', (id, type) => {
    // Act
    const resource = resourceById(defaults.template, id);

    // Assess
    expect(resource.Type).toBe(type);
  });
});

describe('function settings', () => {
  const { template, fn } = defaults;
  const variablesOf = (name: FunctionName) =>
    (resourceById(template, fn(name)).Properties?.Environment as { Variables?: object } | undefined)
      ?.Variables ?? {};

  it.each(FUNCTION_NAMES)(
    'gives the %s function every setting it refuses to start without',
    (name) => {
      // Assess
      const variables = variablesOf(name);
      for (const setting of REQUIRED_SETTINGS[name]) expect(variables).toHaveProperty(ENV[setting]);
    },
  );

  it.each(['dispatcher', 'sweeper'] as const)(
    'lets the %s send to the plan queue it names',
    (name) => {
      // Assess: the queue of LETHE_PLAN_QUEUE_URL, by its ARN
      const queue = targetOf((variablesOf(name) as Record<string, unknown>)[ENV.planQueueUrl]);
      const sends = allowStatements(template, name).filter(
        (statement) =>
          allows([statement.Action ?? []].flat(), 'sqs:SendMessage') &&
          [statement.Resource]
            .flat()
            .some((resource) => JSON.stringify(resource) === JSON.stringify(getAtt(queue, 'Arn'))),
      );
      expect(sends).toHaveLength(1);
    },
  );
});
