import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { synthesize } from './template.ts';

const INSTALL_HINT =
  'cfn-lint was not found on PATH: install it with `pip install "moto[server]"`, which brings cfn-lint (`.ci/run` does)';

/** Regions the template is checked in: resource types and values differ between them. */
const REGIONS = ['us-east-1', 'eu-west-1', 'ap-southeast-2'];

interface Finding {
  readonly Level: string;
  readonly Rule: { readonly Id: string };
  readonly Message: string;
  readonly Filename: string;
}

const dir = mkdtempSync(join(tmpdir(), 'lethe-cfn-lint-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** cfn-lint's findings on these templates, as its JSON output lists them. */
function lint(templates: Record<string, unknown>): Finding[] {
  const files = Object.entries(templates).map(([name, template]) => {
    const file = join(dir, `${name}.json`);
    writeFileSync(file, JSON.stringify(template, null, 1));
    return file;
  });
  const run = spawnSync('cfn-lint', ['--format', 'json', '--regions', ...REGIONS, '--', ...files], {
    encoding: 'utf8',
  });
  if (run.error) throw new Error(`${INSTALL_HINT} (${run.error.message})`);
  // Exit codes are bits: 2 errors, 4 warnings, 8 informational; anything else is a failure to run.
  if ((run.status ?? 1) & ~(2 | 4 | 8)) {
    throw new Error(`cfn-lint failed to run (exit ${run.status}): ${run.stderr}`);
  }
  return JSON.parse(run.stdout) as Finding[];
}

const errorsOf = (findings: Finding[]) =>
  findings
    .filter((finding) => finding.Level === 'Error')
    .map((finding) => `${finding.Rule.Id} ${finding.Message}`);

describe('cfn-lint', () => {
  it('finds no error in the template, with defaults and with the optional props', () => {
    // Prepare
    const defaults = synthesize().template.toJSON();
    const custom = synthesize({
      bucketName: 'existing-data',
      bucketKeyArn: 'arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab',
      alarmEmail: 'oncall@example.com',
      apiLogging: false,
      maxKeysPerSecond: 500,
      certificateKeyVersion: 2,
    }).template.toJSON();

    // Act
    const findings = lint({ defaults, custom });

    // Assess
    expect(errorsOf(findings)).toEqual([]);
  });

  it('reports an error it is shown', () => {
    // Prepare: a queue hidden for longer than SQS allows (12 hours).
    const planted = {
      Resources: {
        Queue: { Type: 'AWS::SQS::Queue', Properties: { VisibilityTimeout: 50_000 } },
      },
    };

    // Act
    const findings = lint({ planted });

    // Assess
    expect(errorsOf(findings)).toHaveLength(1);
  });
});
