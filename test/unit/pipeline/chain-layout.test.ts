import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chainIdOf, isInRange, type ListedObject } from '../../../lib/core/index.ts';
import { chainsOver, childrenPerChain } from '../../../lib/pipeline/chain-layout.ts';

const location = 'streams/acme/logs/1/';
const child = (n: number) => `${location}dt=${String(n).padStart(4, '0')}/`;
const children = (count: number) => Array.from({ length: count }, (_, n) => child(n));
/** The first page of a flat listing: `perChild` keys of each child in order, cut at `pageSize`. */
const sampleOf = (perChild: number, pageSize = 1000): ListedObject[] =>
  Array.from({ length: pageSize }, (_, index) => ({
    key: `${child(Math.floor(index / perChild))}part-${index}.json`,
    size: 1,
  }));

describe('childrenPerChain', () => {
  it('is 1 when the first page holds less than one whole child prefix (children fill pages)', () => {
    expect(childrenPerChain(location, sampleOf(2000), 1000)).toBe(1);
  });

  it('takes a page of keys at 80% by the keys per whole child of the first page', () => {
    expect(childrenPerChain(location, sampleOf(100), 1000)).toBe(8);
    expect(childrenPerChain(location, sampleOf(300), 1000)).toBe(2);
    expect(childrenPerChain(location, sampleOf(500), 1000)).toBe(1);
  });

  it('takes as many small child prefixes as fill 80% of a page', () => {
    expect(childrenPerChain(location, sampleOf(2), 1000)).toBe(400);
  });

  it('does not count keys directly under the location as a child', () => {
    const direct = Array.from({ length: 900 }, (_, n) => ({ key: `${location}a-${n}`, size: 1 }));
    expect(childrenPerChain(location, [...direct, ...sampleOf(50).slice(0, 100)], 1000)).toBe(16);
    expect(childrenPerChain(location, [...direct, ...sampleOf(25).slice(0, 100)], 1000)).toBe(32);
    expect(childrenPerChain(location, direct, 1000)).toBe(1);
  });
});

describe('chainsOver', () => {
  it('makes a chain per child prefix, over the prefix itself, when children fill pages', () => {
    expect(chainsOver(location, children(3), sampleOf(2000), 1000)).toEqual(
      children(3).map((prefix) => ({ chainId: chainIdOf(prefix), prefix })),
    );
  });

  it('makes a chain per run of small children: a key range of the location from its first child to the next run', () => {
    const chains = chainsOver(location, children(20), sampleOf(100), 1000);
    expect(chains).toEqual([
      { chainId: chainIdOf(child(0)), prefix: location, range: { below: child(8) } },
      {
        chainId: chainIdOf(child(8)),
        prefix: location,
        range: { from: child(8), below: child(16) },
      },
      { chainId: chainIdOf(child(16)), prefix: location, range: { from: child(16) } },
    ]);
  });

  it('puts every key of the location, direct keys included, in exactly one chain', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 60 }),
        fc.integer({ min: 1, max: 400 }),
        fc.array(fc.string({ unit: 'grapheme-ascii', maxLength: 12 }), { maxLength: 40 }),
        (count, perChild, names) => {
          const chains = chainsOver(location, children(count), sampleOf(perChild), 1000);
          const keys = [
            ...names.map((name) => `${location}${name}`),
            ...names.map((name, n) => `${child(n % count)}${name}`),
          ];
          for (const key of keys) {
            const holders = chains.filter((chain) =>
              chain.range ? isInRange(key, chain.range) : key.startsWith(chain.prefix),
            );
            // Without ranges, direct keys are left to the next round (no chain holds them).
            const direct = !key.slice(location.length).includes('/');
            expect(holders.length).toBe(direct && !chains[0]?.range ? 0 : 1);
          }
          expect(new Set(chains.map((chain) => chain.chainId)).size).toBe(chains.length);
        },
      ),
    );
  });
});
