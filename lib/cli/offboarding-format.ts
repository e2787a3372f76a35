import { DELETION_STATES, type OffboardingView } from '../core/index.ts';
import { renderCountdown, startsIn } from './countdown.ts';
import { table } from './format.ts';
import { formatBytes, formatCount, plural } from './progress.ts';

/** The states an offboarding ends in: it no longer changes. */
export const offboardingHasEnded = (view: Pick<OffboardingView, 'state'>) =>
  view.state === 'COMPLETED' || view.state === 'CANCELLED';

/** `1 COMPLETED, 2 RUNNING`: its deletions by state, in the order of their lifecycle. */
export function deletionCounts(view: Pick<OffboardingView, 'deletionStates'>, separator = ', ') {
  const counts = DELETION_STATES.flatMap((state) => {
    const count = view.deletionStates[state] ?? 0;
    return count > 0 ? [`${formatCount(count)} ${state}`] : [];
  });
  return counts.length === 0 ? 'none yet' : counts.join(separator);
}

/** `1,200 objects (25.4 KiB)` */
const amountOf = (view: OffboardingView) =>
  `${plural(view.objectsDeleted, 'object')} (${formatBytes(view.bytesDeleted)})`;

/** The head line: the state, the tenant, the offboarding's id, and what it amounts to. */
function headLine(view: OffboardingView): string {
  const what = `offboarding of tenant ${view.tenant} (offboarding ${view.offboardingId})`;
  const extent = {
    SCHEDULED: view.objectsDeleted === 0 ? ': nothing deleted yet' : '',
    RUNNING: ": its streams' deletions are under way",
    COMPLETED: ": every stream's deletion COMPLETED",
    CANCELLED: view.objectsDeleted === 0 ? ': nothing was deleted' : '',
  }[view.state];
  return `${view.state} ${what}${extent}`;
}

/** Its counts and its times, one a line. */
function rows(view: OffboardingView, wallNow: number): string[][] {
  const ended = offboardingHasEnded(view);
  const shown = [
    ['streams', `${formatCount(view.streams)} taken in${ended ? '' : ' so far'}`],
    ['deletions', deletionCounts(view)],
  ];
  // The head line says `nothing deleted` for those.
  const nothing = view.objectsDeleted === 0 && ['SCHEDULED', 'CANCELLED'].includes(view.state);
  if (!nothing) {
    shown.push(['deleted', `${amountOf(view)}${ended ? '' : ' so far'}`]);
  }
  shown.push(['requested', view.requestedAt]);
  if (view.state === 'SCHEDULED') {
    shown.push(['starts', `${view.executeAfter}, ${startsIn(view.executeAfter, wallNow)}`]);
  } else if (view.state === 'RUNNING') {
    shown.push(['started', view.executeAfter]);
  }
  if (view.completedAt) shown.push(['completed', view.completedAt]);
  if (view.cancelledAt) shown.push(['cancelled', view.cancelledAt]);
  return shown;
}

/** What may be done next: cancel it in its grace window, follow it, list its deletions. */
export function offboardingCommands(view: OffboardingView): string[] {
  const { tenant } = view;
  const follow = ['follow it:', `lethe tenants get ${tenant}`];
  const list = ['its deletions:', `lethe deletions list ${tenant}`];
  const failed = view.deletionStates.FAILED ?? 0;
  switch (view.state) {
    case 'SCHEDULED':
      return table([['cancel it:', `lethe tenants cancel ${tenant}`], follow]);
    case 'RUNNING':
      if (failed === 0) return table([follow, list]);
      return [
        ...table([follow]),
        `it waits on ${plural(failed, 'FAILED deletion')}: lethe deletions list ${tenant} --state FAILED, then lethe deletions retry ${tenant} DELETION_ID`,
      ];
    case 'COMPLETED':
      return table([list]);
    case 'CANCELLED':
      return ['the tenant may create streams again', ...table([list])];
  }
}

/**
 * An offboarding for a reader: its state, the streams taken in, its deletions by state, what
 * they deleted, when its deletions start (with a countdown while SCHEDULED), and what to run
 * next. `wallNow` is milliseconds since the epoch.
 */
export function offboardingSummary(view: OffboardingView, wallNow: number): string {
  return `${[headLine(view), ...table(rows(view, wallNow)), ...offboardingCommands(view)].join('\n')}\n`;
}

/**
 * Where a followed offboarding stands, as the parts of a status line: a countdown to its start
 * while SCHEDULED, the streams taken in, its deletions by state, the objects deleted.
 */
export function offboardingProgressParts(view: OffboardingView, wallNow: number): string[] {
  const head =
    view.state === 'SCHEDULED' ? renderCountdown(view.executeAfter, wallNow) : view.state;
  const parts = [
    head,
    `${plural(view.streams, 'stream')} taken in`,
    `deletions ${deletionCounts(view, ' ')}`,
  ];
  if (view.state !== 'CANCELLED' || view.objectsDeleted > 0) {
    parts.push(`${plural(view.objectsDeleted, 'object')} deleted`);
  } else {
    parts.push('nothing was deleted');
  }
  return offboardingHasEnded(view) ? [...parts, `offboarding ${view.offboardingId}`] : parts;
}
