#!/usr/bin/env node
// The CLI is TypeScript run as is (no build step): register tsx, then hand over to it.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../lib/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
