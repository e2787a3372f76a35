import { Duration } from 'aws-cdk-lib';
import {
  type Alarm,
  AlarmStatusWidget,
  Dashboard,
  GraphWidget,
  type IMetric,
  type Metric,
} from 'aws-cdk-lib/aws-cloudwatch';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import type { MetricKey } from '../lib/observability/metrics.ts';
import type { LetheMonitoringProps } from './monitoring.ts';

const MINUTE = Duration.minutes(1);
const FIVE_MINUTES = Duration.minutes(5);

/** What the dashboard draws, made by LetheMonitoring (its alarms watch the same series). */
export interface DashboardParts {
  readonly props: LetheMonitoringProps;
  /** One of Lethe's metrics of this stack. */
  readonly metric: (key: MetricKey, statistic: string, period: Duration, label?: string) => Metric;
  /** A queue's visible messages. */
  readonly depth: (queue: IQueue, label?: string) => Metric;
  readonly oldestAge: Metric;
  readonly apiErrors: Metric;
  /** The sweeper's period, rounded up to whole minutes: its gauges are reported once a sweep. */
  readonly sweepPeriod: Duration;
  readonly alarms: Alarm[];
}

/**
 * The on-call dashboard: throughput, backlog, dead letters, the oldest open deletion,
 * failures, throttling, the API, the alarms, and the lifecycle's gauges (scheduled deletions,
 * offboardings, retention, plans). Its construct id is `Dashboard`, under `scope`.
 */
export function letheDashboard(scope: Construct, parts: DashboardParts): Dashboard {
  const { props, metric, depth, oldestAge, apiErrors, sweepPeriod, alarms } = parts;
  const fnErrors: IMetric[] = Object.entries(props.functions).map(([name, fn]) =>
    fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum', label: `${name} errors` }),
  );
  const graph = (title: string, left: IMetric[], right: IMetric[] = []) =>
    new GraphWidget({ title, left, right, width: 8, height: 6 });
  return new Dashboard(scope, 'Dashboard', {
    defaultInterval: Duration.hours(3),
    widgets: [
      [
        graph(
          'Throughput: objects deleted per minute',
          [metric('objectsDeleted', 'Sum', MINUTE, 'objects')],
          [metric('bytesDeleted', 'Sum', MINUTE, 'bytes')],
        ),
        graph(
          'Backlog: pages waiting in the work queue',
          [
            depth(props.workQueue, 'waiting'),
            props.workQueue.metricApproximateNumberOfMessagesNotVisible({
              period: MINUTE,
              statistic: 'Maximum',
              label: 'in flight',
            }),
          ],
          [
            props.workQueue.metricApproximateAgeOfOldestMessage({
              period: MINUTE,
              statistic: 'Maximum',
              label: 'oldest message (s)',
            }),
          ],
        ),
        graph('Dead letters', [
          depth(props.deadLetterQueue, 'work dead-letter queue'),
          depth(props.dispatchFailures, 'dispatch failures'),
          depth(props.publishFailures, 'publish failures'),
          depth(props.planDeadLetters, 'plan dead-letter queue'),
        ]),
      ],
      [
        new GraphWidget({
          title: 'Age of the oldest open deletion (s)',
          left: [oldestAge.with({ label: 'oldest open deletion' })],
          leftAnnotations: [
            { value: props.maxDeletionAge.toSeconds(), label: 'alarm', color: '#d62728' },
          ],
          width: 8,
          height: 6,
        }),
        graph(
          'Deletions',
          [
            metric('deletionsCompleted', 'Sum', FIVE_MINUTES, 'completed'),
            metric('deletionsFailed', 'Sum', FIVE_MINUTES, 'failed'),
          ],
          [
            metric('deletionDuration', 'p50', FIVE_MINUTES, 'duration p50 (s)'),
            metric('deletionDuration', 'Maximum', FIVE_MINUTES, 'duration max (s)'),
          ],
        ),
        graph('Failures', [
          metric('deletionsFailed', 'Sum', FIVE_MINUTES, 'deletions failed'),
          metric('keysFailed', 'Sum', FIVE_MINUTES, 'keys failed'),
          metric('sweepItemsFailed', 'Sum', FIVE_MINUTES, 'sweep items failed'),
          apiErrors.with({ label: 'api 5xx' }),
          ...fnErrors,
        ]),
      ],
      [
        graph('Throttling retried', [
          metric('keysRetried', 'Sum', MINUTE, 'keys retried (SlowDown)'),
          metric('requestsRetried', 'Sum', MINUTE, 'SDK requests retried'),
          metric('pagesDeferred', 'Sum', MINUTE, 'pages deferred (budget, pace)'),
          metric('pagesSlowedDown', 'Sum', MINUTE, 'pages refused (SlowDown)'),
        ]),
        graph(
          'API',
          [
            props.api.metricCount({ period: FIVE_MINUTES, statistic: 'Sum', label: 'requests' }),
            props.api.metricClientError({ period: FIVE_MINUTES, statistic: 'Sum', label: '4xx' }),
          ],
          [
            props.api.metricLatency({
              period: FIVE_MINUTES,
              statistic: 'p99',
              label: 'p99 (ms)',
            }),
          ],
        ),
        new AlarmStatusWidget({
          title: 'Alarms',
          alarms: alarms,
          width: 8,
          height: 6,
        }),
      ],
      [
        graph(
          'Scheduled deletions (in their grace window, cancellable)',
          [metric('scheduledDeletions', 'Maximum', sweepPeriod, 'scheduled')],
          [metric('eventsPublished', 'Sum', FIVE_MINUTES, 'state changes published')],
        ),
        graph(
          'Tenant offboardings',
          [metric('openOffboardings', 'Maximum', sweepPeriod, 'under way')],
          [metric('offboardingsCompleted', 'Sum', FIVE_MINUTES, 'completed')],
        ),
      ],
      [
        graph(
          'Retention (streams with a policy, partition deletions requested)',
          [metric('retentionPolicies', 'Maximum', sweepPeriod, 'policies')],
          [metric('retentionDeletions', 'Sum', FIVE_MINUTES, 'deletions requested')],
        ),
        graph('Plans the sweeper took on (stopped counting)', [
          metric('plansResumed', 'Sum', FIVE_MINUTES, 'taken on again'),
          metric('plansFailed', 'Sum', FIVE_MINUTES, 'FAILED (Stalled)'),
        ]),
      ],
    ],
  });
}
