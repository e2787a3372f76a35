import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { LetheStack } from '../../cdk/lethe-stack.ts';
import { FUNCTION_NAMES, functionId, resourceById } from './template.ts';

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
});
