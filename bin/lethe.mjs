#!/usr/bin/env node
// The CLI is TypeScript run as is (no build step): register tsx, then hand over to it.
import { register } from 'tsx/esm/api';

register();
// The SDK's notice about future Node.js versions would print on every command that reads a stack.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
const { main } = await import('../lib/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));
