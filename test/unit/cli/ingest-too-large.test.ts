import { describe, expect, it } from 'vitest';
import { run } from '../../../lib/cli/main.ts';
import { apiError, cliDependencies, fakeFetch, LOCAL } from '../../helpers/cli.ts';

describe('ingest of a file larger than the API takes', () => {
  it('says how large the file is and how to get it through', async () => {
    // Prepare: 2,000,003 bytes, refused as the API refuses a body over its limit.
    const file = `[${'1,'.repeat(1_000_000)}1]`;
    const api = fakeFetch(() =>
      apiError(413, 'PayloadTooLarge', 'events body is larger than 1048576 bytes'),
    );
    const { deps, stderr } = cliDependencies({
      fetch: api.fetch,
      readInput: async () => new TextEncoder().encode(file),
    });

    // Act
    const code = await run(['ingest', 'acme/logs', 'events.json', ...LOCAL], deps);

    // Assess
    expect(code).toBe(7);
    expect(stderr.text()).toBe(
      [
        'lethe: PayloadTooLarge: events body is larger than 1048576 bytes (HTTP 413)',
        'hint: the file is 2,000,003 bytes: split its events into smaller JSON arrays, one lethe ingest each (each ingest stores one object)',
        '',
      ].join('\n'),
    );
  });
});
