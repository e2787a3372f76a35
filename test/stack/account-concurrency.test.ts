import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { propsFromContext } from '../../cdk/context.ts';
import { LetheStack, type LetheStackProps } from '../../cdk/lethe-stack.ts';
import { eventSourceOf, offlineApp, synthesize, toNumber } from './template.ts';

const build = (props: LetheStackProps) => () =>
  new LetheStack(new App({ context: { 'aws:cdk:bundling-stacks': [] } }), 'Lethe', props);

/**
 * A throttled SQS batch goes back to its queue with its receive count one higher, so the
 * stack's event sources must not be able to invoke more at once than the account runs: the
 * worker's and the planner's (workerConcurrency each), 10 dispatcher batches and one publisher
 * batch per shard, and the sweeps that overlap.
 */
describe('the account concurrency the event sources need', () => {
  it("fits AWS's default quota of 1,000 with every default", () => {
    const { template } = synthesize();
    const scaling = eventSourceOf(template, 'worker').ScalingConfig as Record<string, unknown>;
    expect(toNumber(scaling.MaximumConcurrency)).toBe(20);
  });

  it.each([
    // 2 x 2 + 10 + 1 + 1 sweep
    { props: { workerConcurrency: 2, accountConcurrency: 16 }, fits: true },
    { props: { workerConcurrency: 2, accountConcurrency: 15 }, fits: false },
    // Sweeps every minute overlap two at a time (a sweep may run 120 s).
    {
      props: { workerConcurrency: 2, accountConcurrency: 16, sweepIntervalMinutes: 1 },
      fits: false,
    },
    // A new account's quota: the defaults (20 workers and 20 planners) do not fit.
    { props: { accountConcurrency: 10 }, fits: false },
    { props: { workerConcurrency: 20, accountConcurrency: 53 }, fits: true },
  ])('$props: fits $fits', ({ props, fits }) => {
    // Act
    const synth = build(props);

    // Assess
    if (fits) expect(synth).not.toThrow();
    else
      expect(synth).toThrow(
        /above the account's concurrency of \d+ \(context accountConcurrency\)/,
      );
  });

  it('refuses an accountConcurrency that is not a whole number of at least 1', () => {
    expect(build({ accountConcurrency: 0 })).toThrow(/accountConcurrency must be an integer/);
  });

  it('reads the quota from the context (-c accountConcurrency=10)', () => {
    // Prepare
    const app = offlineApp();
    app.node.setContext('accountConcurrency', '10');

    // Act
    const props = propsFromContext(app.node);

    // Assess
    expect(props.accountConcurrency).toBe(10);
    expect(build(props)).toThrow(
      /run 52 invocations at once, above the account's concurrency of 10/,
    );
  });
});
