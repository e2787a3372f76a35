import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LONG_OPTIONS } from '../../../lib/cli/args.ts';
import { EXIT_MEANINGS } from '../../../lib/cli/exit-codes.ts';
import { COMMANDS } from '../../../lib/cli/help.ts';

/** docs/cli.md, checked against the CLI's own tables so that it cannot fall behind them. */
const docs = readFileSync(new URL('../../../docs/cli.md', import.meta.url), 'utf8');

describe('docs/cli.md', () => {
  it('lists every exit code, in the words of EXIT_MEANINGS', () => {
    // Prepare
    const rows = [...docs.matchAll(/^\| (\d+) +\| (.+?) +\|$/gm)].map((row) => [
      Number(row[1]),
      row[2],
    ]);

    // Assess
    expect(rows).toEqual(EXIT_MEANINGS.map(([exit, meaning]) => [exit, meaning]));
  });

  it.each(COMMANDS.map(({ usage }) => usage))('documents lethe %s with an example', (usage) => {
    // Prepare: the command's words, before its arguments.
    const words = usage.split(' ').filter((word) => /^[a-z]+$/.test(word));
    const command = `lethe ${words.join(' ')}`;

    // Assess
    expect(docs).toContain(command);
    expect(docs).toMatch(new RegExp(`^\\$ ${command}\\b`, 'm'));
  });

  it.each(LONG_OPTIONS)('documents %s in the options table', (option) => {
    expect(docs).toMatch(new RegExp(`^\\| (\`-h\`, )?\`${option}[\` ]`, 'm'));
  });

  it('says how to run lethe outside the repository', () => {
    expect(docs).toContain('npm link');
    expect(docs).toContain('node /path/to/lethe/bin/lethe.mjs');
  });
});
