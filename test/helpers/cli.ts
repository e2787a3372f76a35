import { vi } from 'vitest';
import type { Fetch } from '../../lib/cli/client.ts';
import type { Interrupts } from '../../lib/cli/commands.ts';
import { type CliDependencies, run } from '../../lib/cli/main.ts';
import type { Output } from '../../lib/cli/progress.ts';
import { type DeletionReceipt, toReceipt } from '../../lib/core/index.ts';
import { aDeletion } from './records.ts';

/** An output stream that remembers what was written, as a TTY or as a pipe. */
export function memoryOutput(options: { isTTY?: boolean; columns?: number } = {}) {
  const chunks: string[] = [];
  const output: Output & { chunks: string[]; text: () => string } = {
    isTTY: options.isTTY ?? false,
    columns: options.columns ?? 100,
    chunks,
    write: (chunk: string) => chunks.push(chunk),
    text: () => chunks.join(''),
  };
  return output;
}

export interface SentRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: string | undefined;
}

export interface FakeReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/** A fetch that answers from `reply` and records every request it was sent. */
export function fakeFetch(reply: (request: SentRequest) => FakeReply | Promise<FakeReply>) {
  const sent: SentRequest[] = [];
  const fetch = vi.fn<Fetch>(async (input, init) => {
    const request: SentRequest = {
      method: init.method ?? 'GET',
      url: input,
      headers: { ...(init.headers as Record<string, string>) },
      body: init.body ? Buffer.from(init.body as Uint8Array).toString('utf8') : undefined,
    };
    sent.push(request);
    const { status, body, headers } = await reply(request);
    const text = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    return new Response(status === 204 ? null : text, {
      status,
      headers: { 'content-type': 'application/json', ...headers },
    });
  });
  return { fetch, sent };
}

/** CLI dependencies for a test: a fake clock whose sleep advances it, memory outputs, no AWS. */
export function cliDependencies(overrides: Partial<CliDependencies> = {}) {
  let clock = 0;
  const stdout = memoryOutput();
  const stderr = memoryOutput();
  const deps: CliDependencies = {
    env: {},
    stdout,
    stderr,
    fetch: fakeFetch(() => ({ status: 500, body: 'no fake reply' })).fetch,
    now: () => clock,
    sleep: async (ms) => {
      clock += ms;
    },
    readInput: async () => new TextEncoder().encode('[{"a":1}]'),
    lookupStack: () => async () => ({ reason: 'no stack in unit tests' }),
    credentials: () => async () => {
      throw new Error('no credentials in unit tests');
    },
    configuredRegion: async () => undefined,
    ...overrides,
  };
  return { deps, stdout, stderr };
}

export const LOCAL = ['--endpoint', 'http://127.0.0.1:3000'];

export const aReceipt = (overrides: Parameters<typeof aDeletion>[0] = {}): DeletionReceipt =>
  toReceipt(aDeletion(overrides));

export const apiError = (status: number, code: string, message: string): FakeReply => ({
  status,
  body: { error: { code, message } },
});

/** Runs lethe against the local endpoint, answered by `reply`. */
export async function lethe(argv: string[], reply: (request: SentRequest) => FakeReply) {
  const api = fakeFetch(reply);
  const { deps, stdout, stderr } = cliDependencies({ fetch: api.fetch });
  const code = await run([...argv, ...LOCAL], deps);
  return { code, stdout: stdout.text(), stderr: stderr.text(), sent: api.sent };
}

/** A request as one line, `METHOD url`. */
export const line = (request: Pick<SentRequest, 'method' | 'url'>) =>
  `${request.method} ${request.url}`;

/** A Ctrl-C that a test presses. */
export function ctrlC() {
  const listeners = new Set<() => void>();
  const interrupts: Interrupts = (listener) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  };
  const press = () => {
    for (const listener of [...listeners]) listener();
  };
  return { interrupts, press, listeners };
}
