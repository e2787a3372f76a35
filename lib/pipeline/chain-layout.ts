import {
  type ChainLayout,
  chainIdOf,
  type KeyRange,
  type ListedObject,
  RUN_FILL,
} from '../core/index.ts';

/**
 * The chains of a stream deletion with several child prefixes. A chain per child prefix pays
 * for itself when children fill pages (a chain's pages list and delete in parallel with the
 * others); a chain per child of a few keys pays a chain's bookkeeping for a fraction of a page.
 * So small children are taken in contiguous runs, each about a page, judged by the
 * location's first page of a flat listing (`sample`): the keys per child prefix it holds. A
 * run is a key range of the location: from its first child to the next run's first child, so
 * the runs together cover every key of the location, those directly under it included. The
 * sample sees only the first children: a run whose page comes back full and still inside its
 * range hands half of the children left to a new chain (`PageWorker`, `ChainStore.split`), so
 * a guess too large costs a few splits, not a serial deletion.
 */
export function chainsOver(
  location: string,
  children: readonly string[],
  sample: readonly ListedObject[],
  pageSize: number,
): ChainLayout[] {
  const perChain = childrenPerChain(location, sample, pageSize);
  if (perChain <= 1) return children.map((prefix) => ({ chainId: chainIdOf(prefix), prefix }));
  const chains: ChainLayout[] = [];
  for (let first = 0; first < children.length; first += perChain) {
    const next = children[first + perChain];
    const range: KeyRange = {
      ...(first > 0 ? { from: children[first] } : {}),
      ...(next !== undefined ? { below: next } : {}),
    };
    chains.push({ chainId: chainIdOf(children[first] as string), prefix: location, range });
  }
  return chains;
}

/** Child prefixes a chain takes: a page's worth (at RUN_FILL) by the sample, at least 1. */
export function childrenPerChain(
  location: string,
  sample: readonly ListedObject[],
  pageSize: number,
): number {
  const counts = new Map<string, number>();
  for (const entry of sample) {
    const child = childOf(entry.key, location);
    if (child !== undefined) counts.set(child, (counts.get(child) ?? 0) + 1);
  }
  // The sample's last child may go on past it: only the children before it are whole.
  const whole = [...counts.values()].slice(0, -1);
  if (whole.length === 0) return 1;
  const perChild = whole.reduce((sum, count) => sum + count, 0) / whole.length;
  const fit = Math.floor((RUN_FILL * pageSize) / perChild);
  return Math.max(1, fit);
}

/** The child prefix of the location a key lies in (absent for a key directly under it). */
function childOf(key: string, location: string): string | undefined {
  const slash = key.indexOf('/', location.length);
  return slash < 0 ? undefined : key.slice(0, slash + 1);
}
