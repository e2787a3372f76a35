import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validations } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import { describe, expect, it } from 'vitest';
import { LetheStack, type LetheStackProps } from '../../cdk/lethe-stack.ts';
import { keys } from '../../lib/store/index.ts';
import { allowStatements, allows, resourceMatches, roleId, type Statement } from './iam.ts';
import {
  FUNCTION_NAMES,
  FUNCTIONS_BUT_PUBLISHER,
  getAtt,
  logicalId,
  offlineApp,
  ref,
  render,
  resourceById,
  resourcesOfType,
  synthesize,
  targetOf,
} from './template.ts';

/** Every queue of the stack, by what it holds. */
const QUEUES = [
  'work',
  'work dead letters',
  'dispatch failures',
  'plan pages',
  'plan dead letters',
  'publish failures',
] as const;

function queueOf(stack: LetheStack, queue: (typeof QUEUES)[number]): Queue {
  return {
    work: stack.workQueue,
    'work dead letters': stack.deadLetterQueue,
    'dispatch failures': stack.dispatchFailures,
    'plan pages': stack.plans.queue,
    'plan dead letters': stack.plans.deadLetterQueue,
    'publish failures': stack.events.failures,
  }[queue];
}

interface ValidationReport {
  pluginReports: {
    pluginName: string;
    violations: { ruleName: string; violatingConstructs: { constructPath: string }[] }[];
  }[];
}

/**
 * Synthesizes the stack the way `cdk synth` does (cdk/app.ts): cdk-nag's AwsSolutions pack is
 * registered on the app before synthesis, and synthesis fails on any finding not acknowledged.
 * Returns the findings left in the validation report, as `rule at construct path`.
 */
function synthesizeWithNag(props: LetheStackProps, extend?: (stack: LetheStack) => void) {
  const outdir = mkdtempSync(join(tmpdir(), 'lethe-nag-'));
  try {
    const app = offlineApp(outdir);
    const stack = new LetheStack(app, 'Lethe', props);
    extend?.(stack);
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
    let error: unknown;
    try {
      app.synth();
    } catch (thrown) {
      error = thrown;
    }
    const report = JSON.parse(
      readFileSync(join(outdir, 'validation-report.json'), 'utf8'),
    ) as ValidationReport;
    const findings = report.pluginReports
      .filter((plugin) => plugin.pluginName === 'AwsSolutions')
      .flatMap((plugin) => plugin.violations)
      .flatMap((violation) =>
        violation.violatingConstructs.map((at) => `${violation.ruleName} at ${at.constructPath}`),
      );
    return { stack, error, findings };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

describe('cdk-nag AwsSolutions', () => {
  it.each([
    { config: 'every default', props: {} },
    {
      config:
        'an existing bucket with its KMS key, an alarm topic, a nested data root and no API logging',
      props: {
        bucketName: 'existing-data',
        bucketKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
        alarmEmail: 'oncall@example.com',
        dataRoot: 'lake/raw',
        apiLogging: false,
      },
    },
  ])('finds nothing unacknowledged with $config', ({ props }) => {
    // Act
    const { error, findings } = synthesizeWithNag(props);

    // Assess
    expect(findings).toEqual([]);
    expect(error).toBeUndefined();
  });

  it('fails synthesis on a finding nobody acknowledged', () => {
    // Act: the control that proves the checks run, with an unencrypted queue.
    const { error, findings } = synthesizeWithNag({}, (stack) => {
      new Queue(stack, 'Plain', { encryption: QueueEncryption.UNENCRYPTED, enforceSSL: true });
    });

    // Assess
    expect(String(error)).toMatch(/ValidationFailed/);
    expect(findings).toContain('AwsSolutions-SQS2 at Lethe/Plain/Resource');
  });

  it('acknowledges only these rules, each with its reason', () => {
    // Act
    const { stack } = synthesize({ alarmEmail: 'oncall@example.com' });
    const acknowledged = stack.node
      .findAll()
      .flatMap((construct) => construct.node.metadata)
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => Object.entries(entry.data as Record<string, string>));
    const rules = new Set(
      acknowledged.map(([id]) => /AwsSolutions-([A-Z]+\d+)/.exec(id)?.[1] ?? id),
    );

    // Assess: a new acknowledgment is a decision for review, so this list must change with it.
    expect([...rules].sort()).toEqual(['APIG2', 'APIG3', 'COG4', 'IAM4', 'IAM5', 'S1', 'SQS3']);
    for (const [id, reason] of acknowledged) {
      expect(reason.length, `the reason for ${id}`).toBeGreaterThanOrEqual(60);
    }
  });
});

describe('encryption at rest', () => {
  const { template, stack } = synthesize({ alarmEmail: 'oncall@example.com' });

  it('encrypts the table', () => {
    // Assess
    template.hasResourceProperties('AWS::DynamoDB::Table', {
      SSESpecification: { SSEEnabled: true },
    });
  });

  it.each(QUEUES)('encrypts the %s', (queue) => {
    // Act
    const properties = resourceById(template, logicalId(stack, queueOf(stack, queue))).Properties;

    // Assess
    expect(properties?.SqsManagedSseEnabled).toBe(true);
  });

  it('covers every queue of the stack', () => {
    // Assess
    expect(resourcesOfType(template, 'AWS::SQS::Queue')).toHaveLength(QUEUES.length);
  });

  it('encrypts the bucket', () => {
    // Assess
    template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          { ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } },
        ],
      },
    });
  });
});

describe('TLS only', () => {
  const { template, stack } = synthesize();
  const deniesPlainHttp = {
    Effect: 'Deny',
    Condition: { Bool: { 'aws:SecureTransport': 'false' } },
  };

  it('denies the bucket to requests without TLS', () => {
    // Assess
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: ref(logicalId(stack, stack.bucket)),
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ ...deniesPlainHttp, Action: 's3:*' })]),
      },
    });
  });

  it.each(QUEUES)('denies the %s to requests without TLS', (queue) => {
    // Assess
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [ref(logicalId(stack, queueOf(stack, queue)))],
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ ...deniesPlainHttp, Action: 'sqs:*' })]),
      },
    });
  });
});

describe('public access', () => {
  it('is blocked on the bucket, all four ways', () => {
    // Assess
    synthesize().template.hasResourceProperties('AWS::S3::Bucket', {
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
    });
  });
});

describe('API logging', () => {
  it("writes one JSON access log line per request, with the caller's IAM ARN", () => {
    // Act
    const { template } = synthesize();
    const [stage] = resourcesOfType(template, 'AWS::ApiGateway::Stage');
    const setting = stage?.[1].Properties?.AccessLogSetting as {
      DestinationArn: unknown;
      Format: string;
    };

    // Assess
    const logGroup = targetOf(setting.DestinationArn);
    expect(resourcesOfType(template, 'AWS::Logs::LogGroup').map(([id]) => id)).toContain(logGroup);
    expect(JSON.parse(setting.Format)).toMatchObject({
      caller: '$context.identity.userArn',
      httpMethod: '$context.httpMethod',
      resourcePath: '$context.resourcePath',
      status: '$context.status',
    });
  });

  it('logs errors of every method', () => {
    // Assess
    synthesize().template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: [
        Match.objectLike({ HttpMethod: '*', ResourcePath: '/*', LoggingLevel: 'ERROR' }),
      ],
    });
  });

  it('is off with apiLogging: false (an account without the API Gateway CloudWatch role)', () => {
    // Act
    const [stage] = resourcesOfType(
      synthesize({ apiLogging: false }).template,
      'AWS::ApiGateway::Stage',
    );

    // Assess
    expect(stage?.[1].Properties?.AccessLogSetting).toBeUndefined();
    expect(stage?.[1].Properties?.MethodSettings).toBeUndefined();
  });

  it('sets the account CloudWatch role its logs need, before the stage, and retains it', () => {
    // Act: in an account with no role, a stage with logging on fails to create.
    const { template } = synthesize();
    const [[accountId, account] = []] = resourcesOfType(template, 'AWS::ApiGateway::Account');
    const [[, stage] = []] = resourcesOfType(template, 'AWS::ApiGateway::Stage');
    const role = resourceById(template, targetOf(account?.Properties?.CloudWatchRoleArn));

    // Assess: retained, since other APIs of the account log through the same setting.
    expect(stage?.DependsOn).toContain(accountId);
    expect(account?.DeletionPolicy).toBe('Retain');
    expect(role.DeletionPolicy).toBe('Retain');
    expect(role.Properties?.AssumeRolePolicyDocument).toMatchObject({
      Statement: [{ Action: 'sts:AssumeRole', Principal: { Service: 'apigateway.amazonaws.com' } }],
    });
    expect(JSON.stringify(role.Properties?.ManagedPolicyArns)).toContain(
      'AmazonAPIGatewayPushToCloudWatchLogs',
    );
  });

  it.each([{ props: { apiLogging: false } }, { props: { apiCloudWatchRole: false } }])(
    'leaves the account CloudWatch role alone with $props',
    ({ props }) => {
      // Assess
      synthesize(props).template.resourceCountIs('AWS::ApiGateway::Account', 0);
    },
  );
});

describe('X-Ray tracing', () => {
  const { template } = synthesize();

  it('traces the API stage', () => {
    // Assess
    template.hasResourceProperties('AWS::ApiGateway::Stage', { TracingEnabled: true });
  });

  it.each(
    resourcesOfType(template, 'AWS::Lambda::Function').map(([id, fn]) => ({
      id,
      tracing: fn.Properties?.TracingConfig,
    })),
  )('traces $id', ({ tracing }) => {
    // Assess
    expect(tracing).toEqual({ Mode: 'Active' });
  });
});

describe('S3 permissions for versioned buckets', () => {
  const { template, stack } = synthesize();
  const bucketArn = getAtt(logicalId(stack, stack.bucket), 'Arn');

  it('let the worker delete objects and their versions, and nothing else', () => {
    // Act
    const deletes = allowStatements(template, 'worker')
      .flatMap((statement) => [statement.Action ?? []].flat())
      .filter((action) => allows([action], 's3:Delete*'));

    // Assess
    expect(deletes.sort()).toEqual(['s3:DeleteObject', 's3:DeleteObjectVersion']);
  });

  it.each(['dispatcher', 'worker', 'sweeper'] as const)(
    'let the %s list versions under the data root only',
    (fn) => {
      // Act
      const lists = allowStatements(template, fn).filter((statement) =>
        allows([statement.Action ?? []].flat(), 's3:ListBucketVersions'),
      );

      // Assess
      expect(lists).toEqual([
        expect.objectContaining({
          Resource: bucketArn,
          Condition: { StringLike: { 's3:prefix': ['streams/*'] } },
        }),
      ]);
    },
  );

  it.each([
    { fn: 'dispatcher', expected: true },
    { fn: 'sweeper', expected: true },
    { fn: 'worker', expected: false },
    { fn: 'api', expected: false },
  ] as const)(
    'let the $fn ask whether the bucket keeps versions: $expected',
    ({ fn, expected }) => {
      // Act
      const actions = allowStatements(template, fn).flatMap((statement) =>
        [statement.Action ?? []].flat(),
      );

      // Assess
      expect(allows(actions, 's3:GetBucketVersioning')).toBe(expected);
    },
  );
});

describe('DynamoDB permissions', () => {
  const defaults = synthesize();
  const { template } = defaults;
  const actionsOf = (fn: (typeof FUNCTION_NAMES)[number]) =>
    allowStatements(template, fn).flatMap((statement) => [statement.Action ?? []].flat());

  it.each(FUNCTION_NAMES)('let the %s neither scan the table nor delete an item of it', (fn) => {
    // Assess: nothing leaves the table but by TTL
    const actions = actionsOf(fn);
    expect(allows(actions, 'dynamodb:Scan')).toBe(false);
    expect(allows(actions, 'dynamodb:DeleteItem')).toBe(false);
    // A BatchWriteItem may hold delete requests, and IAM cannot allow its puts alone
    expect(allows(actions, 'dynamodb:BatchWriteItem')).toBe(false);
  });

  it.each(FUNCTIONS_BUT_PUBLISHER)('let the %s get, query, put and update items', (fn) => {
    // Assess
    const actions = actionsOf(fn);
    for (const action of ['GetItem', 'Query', 'PutItem', 'UpdateItem']) {
      expect(allows(actions, `dynamodb:${action}`), action).toBe(true);
    }
  });

  it('let the publisher read the stream and no item of the table', () => {
    // Assess: it reads the stream's images only
    expect(
      actionsOf('publisher')
        .filter((action) => action.startsWith('dynamodb:'))
        .sort(),
    ).toEqual([
      'dynamodb:DescribeStream',
      'dynamodb:GetRecords',
      'dynamodb:GetShardIterator',
      'dynamodb:ListStreams',
    ]);
  });

  /** The partition keys a function may put or update items under, and its write statements. */
  const writesOf = (fn: (typeof FUNCTION_NAMES)[number]) => {
    const statements = allowStatements(template, fn).filter((statement) =>
      ['dynamodb:PutItem', 'dynamodb:UpdateItem'].some((action) =>
        allows([statement.Action ?? []].flat(), action),
      ),
    ) as Array<Statement & { Condition?: Record<string, Record<string, string[]>> }>;
    const partitions = statements.map(
      (statement) => statement.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'],
    );
    const reaches = (pk: string) =>
      partitions.every((patterns) => (patterns ?? []).some((p) => resourceMatches(p, pk)));
    return { statements, partitions, reaches };
  };
  const id = '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9';
  /** One item key of each partition kind of the table. */
  const ITEMS = {
    stream: keys.stream('acme', 'logs').pk,
    deletion: keys.deletion('acme', id).pk,
    offboarding: keys.offboarding('acme').pk,
    chain: keys.chain(id, 1, 'abc').pk,
    failure: keys.failure(id, 1, 'streams/acme/logs/1/a.json').pk,
    upload: keys.upload(id, 'streams/acme/logs/1/a.json', 'u1').pk,
    offboardingLink: keys.offboardingLink(id, 'logs').pk,
    offboardingCompleted: keys.offboardingCompleted(id).pk,
    plan: keys.plan(id).pk,
    planChain: keys.planChain(id, 'abc').pk,
    keyBudget: keys.keyBudget('lethe-data').pk,
    certificateKey: keys.certificateKey('key-1').pk,
  };
  type Item = keyof typeof ITEMS;

  // A tenant's partition holds its streams, deletions and offboarding alike: who writes one of
  // them may write the others (the key design, docs/ARCHITECTURE.md).
  const TENANT_ITEMS = ['stream', 'deletion', 'offboarding'] as const;
  it.each([
    {
      fn: 'api',
      reaches: ['offboardingLink', 'offboardingCompleted', 'plan', 'planChain', 'certificateKey'],
    },
    {
      fn: 'dispatcher',
      reaches: [
        'chain',
        'failure',
        'upload',
        'offboardingLink',
        'offboardingCompleted',
        'plan',
        'planChain',
        'keyBudget',
      ],
    },
    { fn: 'worker', reaches: ['chain', 'failure', 'upload', 'keyBudget'] },
    {
      fn: 'sweeper',
      reaches: [
        'chain',
        'failure',
        'upload',
        'offboardingLink',
        'offboardingCompleted',
        'plan',
        'planChain',
      ],
    },
  ] as const)('let the $fn write only the partitions it owns', (expected) => {
    // Act
    const { statements, partitions, reaches } = writesOf(expected.fn);
    const owned: readonly Item[] = [...TENANT_ITEMS, ...expected.reaches];

    // Assess: every write is bound to partitions, on the table (no index is written)
    expect(statements.length).toBeGreaterThan(0);
    expect(partitions.every((patterns) => (patterns?.length ?? 0) > 0)).toBe(true);
    for (const statement of statements) {
      expect(statement.Resource).toEqual(
        getAtt(logicalId(defaults.stack, defaults.stack.table), 'Arn'),
      );
    }
    for (const item of Object.keys(ITEMS) as Item[]) {
      expect(reaches(ITEMS[item]), `${expected.fn} writes a ${item} item`).toBe(
        owned.includes(item),
      );
    }
  });

  it("let the planner write plans and their chains, and no stream's or deletion's item", () => {
    // Act
    const writes = allowStatements(template, 'planner').filter((statement) =>
      allows([statement.Action ?? []].flat(), 'dynamodb:UpdateItem'),
    ) as Array<{ Condition?: Record<string, Record<string, string[]>> }>;
    const partitions = writes.flatMap(
      (statement) =>
        statement.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys'] ?? [],
    );
    const reaches = (pk: string) => partitions.some((pattern) => resourceMatches(pattern, pk));

    // Assess: every grant is bound to plan partitions, which hold exactly the plan's items
    expect(writes.length).toBeGreaterThan(0);
    for (const statement of writes) {
      expect(statement.Condition?.['ForAllValues:StringLike']?.['dynamodb:LeadingKeys']).toEqual(
        partitions.slice(0, 1),
      );
    }
    const planId = '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9';
    expect(reaches(keys.plan(planId).pk)).toBe(true);
    expect(reaches(keys.planChain(planId, 'abc').pk)).toBe(true);
    expect(reaches(keys.stream('acme', 'logs').pk)).toBe(false);
    expect(reaches(keys.deletion('acme', planId).pk)).toBe(false);
    expect(reaches(keys.chain(planId, 1, 'abc').pk)).toBe(false);
    expect(reaches(keys.offboarding('acme').pk)).toBe(false);
  });
});

describe('receipt retention', () => {
  it('expires receipts through the TTL on expiresAt', () => {
    // Assess
    synthesize().template.hasResourceProperties('AWS::DynamoDB::Table', {
      TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
    });
  });

  it('refuses a retention the functions would refuse at run time', () => {
    // Assess
    for (const days of [0, 1.5, 36_501]) {
      expect(() => synthesize({ receiptRetentionDays: days })).toThrow(/receiptRetentionDays/);
    }
  });
});

describe('certificate key policy', () => {
  const { stack, template } = synthesize();
  const policy = resourceById(template, logicalId(stack, stack.certificateKey.key)).Properties
    ?.KeyPolicy as { Statement: (Statement & { Principal?: { AWS?: unknown } })[] };
  const apiRole = getAtt(roleId(template, 'api'), 'Arn');
  const actionsOf = (statement: Statement) => [statement.Action ?? []].flat();
  const root = 'arn:<AWS::Partition>:iam::<AWS::AccountId>:root';

  it('lets only the api role sign (no principal of the account with an IAM kms:Sign)', () => {
    // Act
    const signers = policy.Statement.filter(
      (statement) => statement.Effect === 'Allow' && allows(actionsOf(statement), 'kms:Sign'),
    );

    // Assess
    expect(policy.Statement.every((statement) => statement.NotAction === undefined)).toBe(true);
    expect(signers.map((statement) => statement.Principal)).toEqual([{ AWS: apiRole }]);
    expect(actionsOf(signers[0] as Statement).sort()).toEqual(['kms:GetPublicKey', 'kms:Sign']);
  });

  it('lets the account run the key, its policy too, but not sign, grant or use it', () => {
    // Act
    const [account, ...others] = policy.Statement.filter(
      (statement) => render(statement.Principal?.AWS) === root,
    );
    const actions = actionsOf(account as Statement);

    // Assess: KMS refuses a policy that locks the account out of PutKeyPolicy.
    expect(others).toEqual([]);
    expect(allows(actions, 'kms:PutKeyPolicy')).toBe(true);
    expect(allows(actions, 'kms:ScheduleKeyDeletion')).toBe(true);
    for (const action of ['kms:Sign', 'kms:Verify', 'kms:CreateGrant', 'kms:GetPublicKey']) {
      expect(allows(actions, action), action).toBe(false);
    }
  });

  it('names no other principal', () => {
    // Assess
    expect(policy.Statement.map((statement) => render(statement.Principal?.AWS)).sort()).toEqual(
      [`<${roleId(template, 'api')}.Arn>`, root].sort(),
    );
  });
});
