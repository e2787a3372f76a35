import type { Results } from './results.ts';

interface Bar {
  label: string;
  value: number;
  /** Spread of the runs behind the value, drawn as a whisker. */
  range?: [number, number];
  note: string;
  color: string;
}

const xml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

const WIDTH = 760;
const LABEL = 230;
const PLOT = 340;
const ROW = 30;

/** One panel of horizontal bars on a linear scale from zero. */
function panel(
  title: string,
  unit: string,
  bars: Bar[],
  top: number,
): { svg: string; height: number } {
  const max = Math.max(...bars.map((bar) => Math.max(bar.value, bar.range?.[1] ?? 0))) * 1.05;
  const x = (value: number) => LABEL + (value / max) * PLOT;
  const parts = [
    `<text x="10" y="${top + 18}" font-size="15" font-weight="bold">${xml(title)}</text>`,
  ];
  bars.forEach((bar, index) => {
    const y = top + 34 + index * ROW;
    parts.push(
      `<text x="${LABEL - 8}" y="${y + 15}" font-size="12" text-anchor="end">${xml(bar.label)}</text>`,
      `<rect x="${LABEL}" y="${y}" width="${Math.max(1, x(bar.value) - LABEL).toFixed(1)}" height="20" fill="${bar.color}"/>`,
      `<text x="${(x(Math.max(bar.value, bar.range?.[1] ?? 0)) + 6).toFixed(1)}" y="${y + 15}" font-size="12">${xml(bar.note)}</text>`,
    );
    if (bar.range) {
      const [low, high] = bar.range.map(x) as [number, number];
      parts.push(
        `<line x1="${low.toFixed(1)}" x2="${high.toFixed(1)}" y1="${y + 10}" y2="${y + 10}" stroke="#222" stroke-width="1.5"/>`,
        `<line x1="${low.toFixed(1)}" x2="${low.toFixed(1)}" y1="${y + 5}" y2="${y + 15}" stroke="#222"/>`,
        `<line x1="${high.toFixed(1)}" x2="${high.toFixed(1)}" y1="${y + 5}" y2="${y + 15}" stroke="#222"/>`,
      );
    }
  });
  const axisY = top + 34 + bars.length * ROW + 4;
  parts.push(
    `<line x1="${LABEL}" x2="${LABEL + PLOT}" y1="${axisY}" y2="${axisY}" stroke="#999"/>`,
    `<text x="${LABEL}" y="${axisY + 14}" font-size="11" fill="#555">0</text>`,
    `<text x="${LABEL + PLOT}" y="${axisY + 14}" font-size="11" fill="#555" text-anchor="end">${Math.round(max)} ${xml(unit)}</text>`,
  );
  return { svg: parts.join('\n'), height: axisY + 24 - top };
}

/** The benchmark's chart: throughput of the three contenders, and DELETE latency by size. */
export function renderChart(results: Results): string {
  const rates = (runs: Array<{ objectsPerSecond: number }>) =>
    runs.map((run) => run.objectsPerSecond);
  const spread = (values: number[]): [number, number] | undefined =>
    values.length > 1 ? [Math.min(...values), Math.max(...values)] : undefined;
  const { summary, acknowledgement: ack, options } = results;
  const throughputBars: Bar[] = [
    {
      label: 'Lethe, DELETE to COMPLETED',
      value: summary.letheObjectsPerSecond,
      ...(spread(rates(results.lethe)) ? { range: spread(rates(results.lethe)) } : {}),
      note: `${summary.letheObjectsPerSecond.toFixed(0)}/s, ${(100 * summary.letheOverFloor).toFixed(0)}% of floor`,
      color: '#2b7bb9',
    },
    {
      label: 'floor: List + DeleteObjects loop',
      value: summary.floorObjectsPerSecond,
      ...(spread(rates(results.floor)) ? { range: spread(rates(results.floor)) } : {}),
      note: `${summary.floorObjectsPerSecond.toFixed(0)}/s`,
      color: '#8c8c8c',
    },
    {
      label: 'floor, local stack idle beside',
      value: results.floorBesideIdleStack.floor.objectsPerSecond,
      note: `${results.floorBesideIdleStack.floor.objectsPerSecond.toFixed(0)}/s`,
      color: '#bdbdbd',
    },
  ];
  if (results.cli && summary.letheOverCli) {
    throughputBars.push({
      label: 'aws s3 rm --recursive',
      value: results.cli.objectsPerSecond,
      note: `${results.cli.objectsPerSecond.toFixed(0)}/s (Lethe ${summary.letheOverCli.toFixed(1)}x)`,
      color: '#d9822b',
    });
  }
  const ackBars: Bar[] = [
    { size: 'small', data: ack.small },
    { size: 'large', data: ack.large },
  ].flatMap(({ data }) => [
    {
      label: `${data.objects.toLocaleString('en-US')} objects, p50`,
      value: data.ackMs.p50,
      note: `${data.ackMs.p50.toFixed(1)} ms`,
      color: '#4a9c5d',
    },
    {
      label: `${data.objects.toLocaleString('en-US')} objects, p95`,
      value: data.ackMs.p95,
      note: `${data.ackMs.p95.toFixed(1)} ms`,
      color: '#9fd3a9',
    },
  ]);
  const first = panel(
    `Deleting ${options.objects.toLocaleString('en-US')} objects in ${options.partitions} partitions (moto, ${results.environment.cpus} cores)`,
    'objects/s',
    throughputBars,
    0,
  );
  const second = panel(
    `DELETE acknowledgement, ${ack.small.samples.length} streams of each size`,
    'ms',
    ackBars,
    first.height + 10,
  );
  const height = first.height + second.height + 20;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" role="img" aria-labelledby="title">`,
    `<title id="title">${xml(`Lethe deletes ${summary.letheObjectsPerSecond.toFixed(0)} objects/s, the emulator's floor ${summary.floorObjectsPerSecond.toFixed(0)}; DELETE p50 ${ack.small.ackMs.p50.toFixed(0)} ms small, ${ack.large.ackMs.p50.toFixed(0)} ms large`)}</title>`,
    `<rect width="${WIDTH}" height="${height}" fill="white"/>`,
    first.svg,
    second.svg,
    `<text x="${WIDTH - 10}" y="${height - 6}" font-size="10" fill="#777" text-anchor="end">${xml(`npm run bench, ${results.generatedAt.slice(0, 16)}Z; whiskers: min-max over runs`)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}
