import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The import rules of docs/ARCHITECTURE.md, enforced: every import of every source file is
 * resolved and checked against the layer it lands in, so the layering cannot erode silently.
 */
const ROOT = resolve(dirname(new URL(import.meta.url).pathname), '../..');

/** What each part of the code may import, besides itself and npm packages. */
const RULES: Record<string, readonly string[]> = {
  'lib/core': [],
  'lib/support': ['lib/core'],
  'lib/observability': ['lib/core', 'lib/support'],
  'lib/store': ['lib/core', 'lib/support'],
  'lib/s3': ['lib/core', 'lib/support'],
  'lib/queue': ['lib/core', 'lib/support'],
  'lib/bus': ['lib/core', 'lib/support'],
  'lib/kms': ['lib/core', 'lib/support'],
  'lib/pipeline': ['lib/core', 'lib/support', 'lib/store', 'lib/s3', 'lib/queue', 'lib/bus'],
  'lib/api': ['lib/core', 'lib/support', 'lib/store', 'lib/s3'],
  'lib/lambda': [
    'lib/core',
    'lib/support',
    'lib/observability',
    'lib/store',
    'lib/s3',
    'lib/queue',
    'lib/bus',
    'lib/kms',
    'lib/pipeline',
    'lib/api',
  ],
  'lib/cli': ['lib/core'],
  // The dev runtime may reach everything: it runs the stack's template and the functions.
  'lib/local': ['lib', 'cdk', 'functions'],
  functions: ['lib/lambda'],
  // The stack shares single sources with the functions: settings, metrics, routes, the table.
  cdk: [
    'lib/core/names.ts',
    'lib/support/config.ts',
    'lib/observability/metrics.ts',
    'lib/api/routes.ts',
    'lib/store/layout.ts',
  ],
};

/** Packages only some layers may use: the domain uses no SDK at all. */
const PACKAGE_RULES: Record<string, RegExp> = {
  'lib/core': /^(?!@aws-sdk\/|@aws-lambda-powertools\/|aws-cdk-lib|aws-lambda)/,
};

function sourceFiles(folder: string): string[] {
  return readdirSync(join(ROOT, folder)).flatMap((name) => {
    const path = join(folder, name);
    if (statSync(join(ROOT, path)).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The specifiers a file imports: static, type-only, re-exports and dynamic imports. */
function importsOf(file: string, text = readFileSync(join(ROOT, file), 'utf8')): string[] {
  const specifiers = [
    ...text.matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/gms),
    ...text.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm),
    ...text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g),
  ];
  return specifiers.map((match) => match[1] ?? '');
}

/** The repository path an import lands on, or undefined for a package. */
function target(file: string, specifier: string): string | undefined {
  if (specifier.startsWith('#lib/')) return `lib/${specifier.slice(5)}`;
  if (specifier.startsWith('#functions/')) return `functions/${specifier.slice(11)}`;
  if (!specifier.startsWith('.')) return undefined;
  return relative(ROOT, resolve(ROOT, dirname(file), specifier));
}

const layerOf = (file: string) =>
  Object.keys(RULES)
    .filter((layer) => file === layer || file.startsWith(`${layer}/`))
    .sort((a, b) => b.length - a.length)[0];

const within = (path: string, allowed: string) =>
  path === allowed || path.startsWith(`${allowed}/`);

const files = ['lib', 'functions', 'cdk'].flatMap(sourceFiles);

describe('the import rules', () => {
  it('knows the layer of every source file', () => {
    const loose = files.filter((file) => !layerOf(file));

    expect(loose).toEqual([]);
  });

  /** The imports of `file` its layer may not make (of `text`, when given, instead of the file). */
  const brokenImports = (file: string, text?: string) => {
    const layer = layerOf(file) ?? '';
    return importsOf(file, text).filter((specifier) => {
      const path = target(file, specifier);
      if (path === undefined) return !(PACKAGE_RULES[layer]?.test(specifier) ?? true);
      if (within(path, layer)) return false;
      return !(RULES[layer] ?? []).some((allowed) => within(path, allowed));
    });
  };

  it.each(files)('%s imports only what its layer may', (file) => {
    expect(brokenImports(file)).toEqual([]);
  });

  it('can fail: a domain file importing the SDK, or the store, breaks the rules', () => {
    // Prepare: lib/core/clock.ts as it is, with two imports its layer may not make
    const file = 'lib/core/clock.ts';
    const text = [
      "import { S3Client } from '@aws-sdk/client-s3';",
      "import { Table } from '../store/table.ts';",
      readFileSync(join(ROOT, file), 'utf8'),
    ].join('\n');

    // Assess: found by the same scan and rules as every file's
    expect(brokenImports(file, text)).toEqual(['@aws-sdk/client-s3', '../store/table.ts']);
  });
});

describe('production code and the emulator', () => {
  const production = files.filter((file) => !file.startsWith('lib/local/'));

  it.each(production)('%s does not detect an emulator', (file) => {
    const text = readFileSync(join(ROOT, file), 'utf8');

    expect(text).not.toMatch(/AWS_ENDPOINT_URL|moto|localstack|emulat/i);
  });
});
