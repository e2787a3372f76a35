import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { LetheStack } from '../../cdk/lethe-stack.ts';
import { FUNCTION_NAMES, type FunctionName, functionId, resourceById } from './template.ts';

// Prepare: the stack synthesized as `cdk synth` does it, each function bundled by esbuild.
const outdir = mkdtempSync(join(tmpdir(), 'lethe-bundles-'));
afterAll(() => rmSync(outdir, { recursive: true, force: true }));
const featureFlags = (
  JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as {
    context?: Record<string, unknown>;
  }
).context;
const app = new App({
  outdir,
  context: { ...featureFlags, 'aws:cdk:enable-asset-metadata': true },
});
const stack = new LetheStack(app, 'Lethe');
const template = Template.fromStack(stack);
const assembly = app.synth();

/** The modules a bundle imports from outside itself, as esbuild parses the bundle. */
async function importsOf(bundle: string): Promise<string[]> {
  const result = await build({
    entryPoints: [bundle],
    bundle: true,
    write: false,
    metafile: true,
    format: 'esm',
    platform: 'node',
    logLevel: 'silent',
    // Every import stays out: only the bundle's own import statements are listed.
    plugins: [
      {
        name: 'all-external',
        setup(b) {
          b.onResolve({ filter: /.*/ }, (args) =>
            args.kind === 'entry-point' ? undefined : { path: args.path, external: true },
          );
        },
      },
    ],
  });
  return Object.values(result.metafile.inputs).flatMap((input) =>
    input.imports.map((imported) => imported.path),
  );
}

/** The function's environment from the template, a plausible value in place of each reference. */
function environmentOf(name: FunctionName): Record<string, string> {
  const { Environment } = resourceById(template, functionId(template, name)).Properties ?? {};
  const variables = (Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables;
  return Object.fromEntries(
    Object.entries(variables ?? {}).map(([key, value]) => [
      key,
      typeof value === 'string'
        ? value
        : key.endsWith('QUEUE_URL')
          ? 'https://sqs.us-east-1.amazonaws.com/123456789012/queue'
          : `placeholder-${key.toLowerCase()}`,
    ]),
  );
}

describe('function bundles', () => {
  it.each(FUNCTION_NAMES)('the %s bundle carries its AWS SDK and imports none', async (name) => {
    // Act
    const assetPath = resourceById(template, functionId(template, name)).Metadata?.[
      'aws:asset:path'
    ];
    const imports = await importsOf(join(assembly.directory, String(assetPath), 'index.mjs'));

    // Assess: Node's own modules only, so Lambda runs the SDK the tests ran, not the runtime's.
    expect(imports.filter((path) => !path.startsWith('node:'))).toEqual([]);
  });

  it.each(FUNCTION_NAMES)('the %s bundle loads alone, with no node_modules', (name) => {
    // Prepare: the bundle by itself, where no node_modules can be found
    const assetPath = resourceById(template, functionId(template, name)).Metadata?.[
      'aws:asset:path'
    ];
    const alone = mkdtempSync(join(tmpdir(), `lethe-${name}-`));
    copyFileSync(
      join(assembly.directory, String(assetPath), 'index.mjs'),
      join(alone, 'index.mjs'),
    );

    // Act: as Lambda's init phase imports it, with the function's environment
    const run = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        "const m = await import('./index.mjs'); console.log(typeof m.handler);",
      ],
      {
        cwd: alone,
        encoding: 'utf8',
        env: { PATH: process.env.PATH, AWS_REGION: 'us-east-1', ...environmentOf(name) },
      },
    );
    rmSync(alone, { recursive: true, force: true });

    // Assess
    expect(run.stderr).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find (module|package)/);
    expect({ status: run.status, stdout: run.stdout.trim() }).toEqual({
      status: 0,
      stdout: 'function',
    });
  });
});
