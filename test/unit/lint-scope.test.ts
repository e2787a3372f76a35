import { execFileSync, execSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = new URL('../..', import.meta.url).pathname;
const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  scripts: Record<string, string>;
};

/** Runs `npm run lint`'s command in `cwd`, as npm would (its .bin on PATH): the exit code. */
function lint(cwd: string): number {
  try {
    execSync(scripts.lint as string, {
      cwd,
      stdio: 'pipe',
      env: { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH}` },
    });
    return 0;
  } catch (error) {
    return (error as { status: number }).status;
  }
}

/**
 * `npm test` lints what the repository tracks: a file a user leaves in the clone (the walkthrough's
 * certificate, a scratch script) must not fail the tests, and a tracked file still must.
 */
describe('npm run lint', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lethe-lint-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  git('init', '-q');
  copyFileSync(join(ROOT, 'biome.json'), join(dir, 'biome.json'));
  writeFileSync(join(dir, 'tracked.json'), '{ "a": 1 }\n');
  git('add', 'biome.json', 'tracked.json');

  it('leaves an untracked file alone', () => {
    writeFileSync(join(dir, 'cert.json'), '{"a":1,   "b":2}');

    expect(lint(dir)).toBe(0);
  });

  it('still fails on a tracked file that is not formatted', () => {
    writeFileSync(join(dir, 'tracked.json'), '{"a":1,   "b":2}');

    expect(lint(dir)).not.toBe(0);
  });
});
