import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * `npm start` with a setting given wrong: it stops before any emulator is started, so these run
 * in a second, with one line that names the setting instead of a stack trace.
 */
function start(env: Record<string, string>) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'lib/local/main.ts'], {
    env: { ...process.env, LETHE_QUIET: '1', ...env },
    encoding: 'utf8',
  });
  return { status: result.status, stderr: result.stderr };
}

// Each spawns node with tsx: a few seconds on a shared machine, not the unit default of five.
describe('npm start with a setting given wrong', { timeout: 60_000 }, () => {
  it.each([
    ['abc', 'PORT must be a whole number from 0 to 65535 (got abc)'],
    ['99999', 'PORT must be a whole number from 0 to 65535 (got 99999)'],
  ])('PORT=%s is told in one line, exit 1', (port, message) => {
    // Act
    const { status, stderr } = start({ PORT: port });

    // Assess
    expect(stderr).toBe(`lethe: ${message}\n`);
    expect(status).toBe(1);
  });

  it('names any other whole-number setting the same way', () => {
    // Act
    const { status, stderr } = start({ LETHE_SWEEP_INTERVAL_SECONDS: '5m' });

    // Assess
    expect(stderr).toMatch(
      /^lethe: LETHE_SWEEP_INTERVAL_SECONDS must be a whole number .*\(got 5m\)\n$/,
    );
    expect(status).toBe(1);
  });
});

describe('npm start with LETHE_QUIET given wrong', { timeout: 60_000 }, () => {
  it('is told in one line, exit 1', () => {
    // Act
    const { status, stderr } = start({ LETHE_QUIET: 'request' });

    // Assess
    expect(stderr).toMatch(/^lethe: LETHE_QUIET must be .*\(got request\)\n$/);
    expect(status).toBe(1);
  });
});
