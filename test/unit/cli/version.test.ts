import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { run } from '../../../lib/cli/main.ts';
import { cliDependencies, fakeFetch } from '../../helpers/cli.ts';

/** The version every bug report asks for, read where npm keeps it. */
const { version } = JSON.parse(
  readFileSync(new URL('../../../package.json', import.meta.url), 'utf8'),
) as { version: string };

describe('lethe --version', () => {
  it('prints the package version and sends nothing', async () => {
    // Prepare
    const { fetch } = fakeFetch(() => ({ status: 200, body: { status: 'ok' } }));
    const { deps, stdout, stderr } = cliDependencies({ fetch });

    // Act
    const code = await run(['--version'], deps);

    // Assess
    expect(code).toBe(0);
    expect(stdout.text()).toBe(`lethe ${version}\n`);
    expect(stderr.text()).toBe('');
    expect(fetch).not.toHaveBeenCalled();
  });

  it('answers after a command too, as gh and the AWS CLI do', async () => {
    // Prepare
    const { deps, stdout } = cliDependencies();

    // Act
    const code = await run(['delete', 'acme/logs', '--version'], deps);

    // Assess
    expect(code).toBe(0);
    expect(stdout.text()).toBe(`lethe ${version}\n`);
  });

  it('is in the help', async () => {
    // Prepare
    const { deps, stdout } = cliDependencies();

    // Act
    await run(['--help'], deps);

    // Assess
    expect(stdout.text()).toMatch(/^ {2}--version +print lethe's version$/m);
  });
});
