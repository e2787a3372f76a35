import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import {
  type Alarm,
  ComparisonOperator,
  type Dashboard,
  MathExpression,
  Metric,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { PolicyStatement, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Key } from 'aws-cdk-lib/aws-kms';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { EmailSubscription } from 'aws-cdk-lib/aws-sns-subscriptions';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRICS, METRICS_NAMESPACE, type MetricKey } from '../lib/observability/metrics.ts';
import { letheDashboard } from './dashboard.ts';

export interface LetheMonitoringProps {
  readonly workQueue: IQueue;
  readonly deadLetterQueue: IQueue;
  readonly dispatchFailures: IQueue;
  /** Stream records the publisher could not put on the event bus. */
  readonly publishFailures: IQueue;
  /** Plan pages that failed every delivery. */
  readonly planDeadLetters: IQueue;
  readonly api: RestApi;
  readonly functions: Record<string, IFunction>;
  /** How often the sweeper runs, and so how often the age of the oldest deletion is reported. */
  readonly sweepInterval: Duration;
  /** Page when the oldest open deletion was requested longer ago than this. */
  readonly maxDeletionAge: Duration;
  /** Subscribe this address to every alarm. @default no topic */
  readonly alarmEmail?: string;
}

const MINUTE = Duration.minutes(1);
const FIVE_MINUTES = Duration.minutes(5);

/**
 * One of Lethe's metrics, of one stack: `service` is the stack's name, which every function
 * emits its metrics under (POWERTOOLS_SERVICE_NAME), so two stacks in an account and region
 * never share a series, nor page for each other's deletions.
 */
export const letheMetric = (
  service: string,
  key: MetricKey,
  statistic: string,
  period: Duration,
  label?: string,
) =>
  new Metric({
    namespace: METRICS_NAMESPACE,
    metricName: METRICS[key].name,
    dimensionsMap: { service },
    statistic,
    period,
    ...(label ? { label } : {}),
  });

/**
 * What the people on call look at and are paged by: a dashboard of throughput, backlog, dead
 * letters, the oldest open deletion and failures, and alarms on what needs a human.
 */
export class LetheMonitoring extends Construct {
  public readonly dashboard: Dashboard;
  public readonly alarms: Record<
    | 'deadLetters'
    | 'dispatchFailures'
    | 'publishFailures'
    | 'planDeadLetters'
    | 'failedDeletions'
    | 'longRunningDeletion'
    | 'apiErrors'
    | 'sweeper',
    Alarm
  >;
  /** Where alarms are sent, when an address was given. */
  public readonly topic: Topic | undefined;

  constructor(scope: Construct, id: string, props: LetheMonitoringProps) {
    super(scope, id);
    const service = Stack.of(this).stackName;
    const metric = (key: MetricKey, statistic: string, period: Duration, label?: string) =>
      letheMetric(service, key, statistic, period, label);
    // Alarms watch unlabeled metrics; the dashboard labels its copies.
    const depth = (queue: IQueue, label?: string) =>
      queue.metricApproximateNumberOfMessagesVisible({
        period: MINUTE,
        statistic: 'Maximum',
        ...(label ? { label } : {}),
      });
    const sweepPeriod = Duration.minutes(Math.max(1, Math.ceil(props.sweepInterval.toMinutes())));
    const oldestAge = metric('oldestDeletionAge', 'Maximum', sweepPeriod);
    const apiErrors = props.api.metricServerError({ period: FIVE_MINUTES, statistic: 'Sum' });

    const notEmpty = (id: string, queue: IQueue, description: string) =>
      depth(queue).createAlarm(this, id, {
        alarmDescription: description,
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      });
    this.alarms = {
      deadLetters: notEmpty(
        'DeadLettersAlarm',
        props.deadLetterQueue,
        'Work messages failed every delivery and sit in the dead-letter queue; their deletions stall until the sweeper resumes them. Read the worker logs for the messageId, fix the cause, then redrive the queue.',
      ),
      dispatchFailures: notEmpty(
        'DispatchFailuresAlarm',
        props.dispatchFailures,
        "Stream records of new deletions exhausted the dispatcher's retries. The sweeper dispatches the deletions again; read the dispatcher logs for the cause.",
      ),
      publishFailures: notEmpty(
        'PublishFailuresAlarm',
        props.publishFailures,
        'State changes of deletions could not be put on the event bus after every retry, so subscribers missed them. Read the publisher logs ("publish failed"); each message names the stream records to replay.',
      ),
      planDeadLetters: notEmpty(
        'PlanDeadLettersAlarm',
        props.planDeadLetters,
        'Plan pages failed every delivery. The sweeper takes their plans on again, and ends a plan FAILED (Stalled) when it counts no page after every attempt. Read the planner logs ("plan page failed") for the cause; nothing was deleted (plans never delete). Request the plan again once fixed.',
      ),
      failedDeletions: metric('deletionsFailed', 'Sum', FIVE_MINUTES).createAlarm(
        this,
        'FailedDeletionsAlarm',
        {
          alarmDescription:
            'A deletion ended FAILED: keys that cannot be deleted (AccessDenied, Object Lock) or a deletion that stalled. Its receipt lists the keys and codes; retry it once the cause is fixed.',
          threshold: 0,
          comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
          evaluationPeriods: 1,
          treatMissingData: TreatMissingData.NOT_BREACHING,
        },
      ),
      longRunningDeletion: oldestAge.createAlarm(this, 'LongRunningDeletionAlarm', {
        alarmDescription: `A deletion has been open for more than ${props.maxDeletionAge.toHumanString()}. The sweeper log line "swept" names the oldest one.`,
        threshold: props.maxDeletionAge.toSeconds(),
        comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
        evaluationPeriods: 1,
        // Reported once per sweep: between sweeps the alarm keeps its state.
        treatMissingData: TreatMissingData.IGNORE,
      }),
      sweeper: this.#sweeperAlarm(props, sweepPeriod),
      apiErrors: apiErrors.createAlarm(this, 'ApiErrorsAlarm', {
        alarmDescription:
          'The API answered 5xx: every 5xx is a bug. Read the api function logs ("request failed").',
        threshold: 1,
        comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: TreatMissingData.NOT_BREACHING,
      }),
    };

    this.topic = props.alarmEmail ? this.#topic(props.alarmEmail) : undefined;
    if (this.topic) {
      const action = new SnsAction(this.topic);
      for (const alarm of Object.values(this.alarms)) {
        alarm.addAlarmAction(action);
        alarm.addOkAction(action);
      }
    }

    this.dashboard = letheDashboard(this, {
      props,
      metric,
      depth,
      oldestAge,
      apiErrors,
      sweepPeriod,
      alarms: Object.values(this.alarms),
    });
  }

  /**
   * The sweeper is the pipeline's safety net (grace windows, stalled deletions, retention,
   * offboardings): it pages when it fails, or has not run, three sweeps in a row. Its own
   * metrics (the oldest open deletion) go quiet then, so they cannot tell. A sweep with an item
   * it could not handle (`SweepItemsFailed`) handles every other item and then fails, so one
   * item that fails every time pages too, and one that failed once does not.
   */
  #sweeperAlarm(props: LetheMonitoringProps, sweepPeriod: Duration): Alarm {
    const sweeper = props.functions.sweeper;
    if (!sweeper) throw new Error('monitoring needs the sweeper function');
    const period = { period: sweepPeriod, statistic: 'Sum' };
    const failing = new MathExpression({
      label: 'sweeps failed, or none ran',
      expression: 'IF(runs < 1, 1, errors)',
      usingMetrics: {
        runs: sweeper.metricInvocations(period),
        errors: sweeper.metricErrors(period),
      },
      period: sweepPeriod,
    });
    return failing.createAlarm(this, 'SweeperAlarm', {
      alarmDescription:
        'The sweeper failed, or did not run, three sweeps in a row. A sweep fails when an item of it failed (SweepItemsFailed): the sweeper logs "sweep item failed" with its keys and the error; every other item was handled, that one waits (and a tenant whose offboarding failed has no deletion begun). A sweeper that fails whole or does not run ends no grace window, resumes no stalled deletion, and stops retention and offboardings. Read the sweeper logs; check its schedule is enabled. After a deploy it is in ALARM until the first sweep runs (no sweep yet counts as none ran).',
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 3,
      treatMissingData: TreatMissingData.BREACHING,
    });
  }

  /** An encrypted topic CloudWatch may publish to, with one email subscription. */
  #topic(email: string) {
    const key = new Key(this, 'AlarmTopicKey', {
      description: 'Lethe: encrypts the alarm topic',
      enableKeyRotation: true,
      // It only ever encrypts notifications in transit through the topic: nothing to keep.
      removalPolicy: RemovalPolicy.DESTROY,
    });
    // CloudWatch publishes to an encrypted topic only if the key lets it: for this account's
    // alarms in this region only, so no other account's alarm can use the key (confused deputy).
    const stack = Stack.of(this);
    const alarmsOfThisAccount = {
      StringEquals: { 'aws:SourceAccount': stack.account },
      ArnLike: {
        'aws:SourceArn': stack.formatArn({
          service: 'cloudwatch',
          resource: 'alarm',
          resourceName: '*',
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      },
    };
    key.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: alarmsOfThisAccount,
      }),
    );
    const topic = new Topic(this, 'AlarmTopic', {
      displayName: 'Lethe alarms',
      masterKey: key,
      enforceSSL: true,
    });
    // A topic policy replaces the topic's default one, which is what let this account's
    // alarms publish: enforceSSL writes a policy of one Deny, so the Allow is said again here.
    topic.addToResourcePolicy(
      new PolicyStatement({
        principals: [new ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: alarmsOfThisAccount,
      }),
    );
    topic.addSubscription(new EmailSubscription(email));
    return topic;
  }
}
