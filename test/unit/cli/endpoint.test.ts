import { describe, expect, it, vi } from 'vitest';
import {
  describeSource,
  type EndpointChoice,
  EndpointError,
  resolveEndpoint,
  type StackLookup,
  unreachableHint,
} from '../../../lib/cli/endpoint.ts';
import { UsageError } from '../../../lib/cli/values.ts';

const API_URL = 'https://abc.execute-api.eu-west-1.amazonaws.com/prod/';
const deployed = () => vi.fn<StackLookup>(async () => ({ url: API_URL }));
const missing = () =>
  vi.fn<StackLookup>(async () => ({ reason: 'Stack with id Lethe does not exist' }));

describe('choosing the endpoint', () => {
  it('takes --endpoint first, without asking CloudFormation', async () => {
    // Prepare
    const lookupStack = deployed();

    // Act
    const choice = await resolveEndpoint({
      flag: 'http://127.0.0.1:4000/',
      env: 'http://127.0.0.1:5000',
      lookupStack,
    });

    // Assess
    expect(choice).toEqual({ url: 'http://127.0.0.1:4000', source: 'flag' });
    expect(lookupStack).not.toHaveBeenCalled();
  });

  it('takes LETHE_ENDPOINT next', async () => {
    // Prepare
    const lookupStack = deployed();

    // Act
    const choice = await resolveEndpoint({ env: 'http://127.0.0.1:5000', lookupStack });

    // Assess
    expect(choice).toEqual({ url: 'http://127.0.0.1:5000', source: 'env' });
    expect(lookupStack).not.toHaveBeenCalled();
  });

  it('then the ApiUrl output of the stack named Lethe', async () => {
    // Prepare
    const lookupStack = deployed();

    // Act
    const choice = await resolveEndpoint({ lookupStack });

    // Assess
    expect(choice).toEqual({
      url: 'https://abc.execute-api.eu-west-1.amazonaws.com/prod',
      source: 'stack',
      stack: 'Lethe',
    });
    expect(lookupStack).toHaveBeenCalledWith('Lethe');
  });

  it('then the local stack when there is no deployed stack to read', async () => {
    // Act
    const choice = await resolveEndpoint({ lookupStack: missing() });

    // Assess
    expect(choice).toEqual({
      url: 'http://127.0.0.1:3000',
      source: 'local',
      stack: 'Lethe',
      reason: 'Stack with id Lethe does not exist',
    });
  });

  it('reads the stack named by --stack', async () => {
    // Prepare
    const lookupStack = deployed();

    // Act
    await resolveEndpoint({ stack: 'LetheStaging', lookupStack });

    // Assess
    expect(lookupStack).toHaveBeenCalledWith('LetheStaging');
  });

  it('fails, rather than falls back, when the stack named by --stack cannot be read', async () => {
    // Act
    const choice = resolveEndpoint({ stack: 'Lethe', lookupStack: missing() });

    // Assess
    await expect(choice).rejects.toThrow(EndpointError);
    await expect(choice).rejects.toThrow(
      'cannot read the ApiUrl of stack Lethe: Stack with id Lethe does not exist',
    );
  });

  it.each([
    ['ftp://example.com', 'LETHE_ENDPOINT must be an http or https URL: ftp://example.com'],
    ['localhost:3000', 'LETHE_ENDPOINT must be an http or https URL: localhost:3000'],
    ['127.0.0.1:3000', 'LETHE_ENDPOINT is not a URL: 127.0.0.1:3000'],
    ['not a url', 'LETHE_ENDPOINT is not a URL: not a url'],
  ])('refuses LETHE_ENDPOINT=%s as a usage error', async (env, message) => {
    const choice = resolveEndpoint({ env, lookupStack: missing() });

    await expect(choice).rejects.toThrow(UsageError);
    await expect(choice).rejects.toThrow(message);
  });

  it.each([
    [
      'localhost:3000',
      'LETHE_ENDPOINT must be an http or https URL: localhost:3000 (did you mean http://localhost:3000?)',
    ],
    [
      '127.0.0.1:3000',
      'LETHE_ENDPOINT is not a URL: 127.0.0.1:3000 (did you mean http://127.0.0.1:3000?)',
    ],
  ])('suggests the scheme LETHE_ENDPOINT=%s lacks', async (env, message) => {
    await expect(resolveEndpoint({ env, lookupStack: missing() })).rejects.toThrow(message);
  });

  it('refuses an empty --endpoint or --stack rather than passing over it', async () => {
    const lookupStack = vi.fn<StackLookup>(async () => ({ url: 'https://x.invalid/prod' }));

    const endpoint = resolveEndpoint({ flag: '', env: 'http://127.0.0.1:4000', lookupStack });
    const stack = resolveEndpoint({ stack: '', lookupStack });

    await expect(endpoint).rejects.toThrow(UsageError);
    await expect(endpoint).rejects.toThrow('--endpoint is empty');
    await expect(stack).rejects.toThrow(UsageError);
    await expect(stack).rejects.toThrow('--stack needs the name of a stack');
    expect(lookupStack).not.toHaveBeenCalled();
  });

  it.each([
    [
      'http://user:secret@127.0.0.1:3000',
      '--endpoint must not hold a user name or password: requests to AWS are signed with SigV4 instead',
    ],
    [
      'http://127.0.0.1:3000/prod?stage=1',
      '--endpoint must not have a query or fragment: every request adds its own path and query (got http://127.0.0.1:3000/prod?stage=1)',
    ],
    [
      'http://127.0.0.1:3000/#top',
      '--endpoint must not have a query or fragment: every request adds its own path and query (got http://127.0.0.1:3000/#top)',
    ],
  ])(
    'refuses --endpoint %s as a usage error (it was sent, and failed as unreachable)',
    async (flag, message) => {
      const choice = resolveEndpoint({ flag, lookupStack: missing() });

      await expect(choice).rejects.toThrow(UsageError);
      await expect(choice).rejects.toThrow(message);
      await expect(choice).rejects.not.toThrow('secret');
    },
  );

  it('refuses a malformed --endpoint as a usage error', async () => {
    const choice = resolveEndpoint({ flag: 'htp:/x', lookupStack: missing() });

    await expect(choice).rejects.toThrow(UsageError);
    await expect(choice).rejects.toThrow('--endpoint must be an http or https URL: htp:/x');
  });

  it('refuses a malformed ApiUrl output as an unusable endpoint, not a usage error', async () => {
    const lookupStack = vi.fn<StackLookup>(async () => ({ url: 'not a url' }));

    const choice = resolveEndpoint({ lookupStack });

    await expect(choice).rejects.toThrow(EndpointError);
    await expect(choice).rejects.toThrow(
      'the ApiUrl output of stack Lethe is not a URL: not a url',
    );
  });
});

describe.each<{ choice: EndpointChoice; source: string; hint: string }>([
  {
    choice: { url: 'http://127.0.0.1:4000', source: 'flag' },
    source: 'the endpoint came from --endpoint',
    hint: 'hint: start the local stack with `npm start`, or check --endpoint',
  },
  {
    choice: { url: 'http://127.0.0.1:4000', source: 'env' },
    source: 'the endpoint came from LETHE_ENDPOINT',
    hint: 'hint: start the local stack with `npm start`, or check LETHE_ENDPOINT',
  },
  {
    choice: { url: API_URL, source: 'stack', stack: 'LetheStaging' },
    source: 'the endpoint came from the ApiUrl output of stack LetheStaging',
    hint: 'hint: check that stack LetheStaging is deployed, or set LETHE_ENDPOINT',
  },
  {
    choice: { url: 'http://127.0.0.1:3000', source: 'local', stack: 'Lethe', reason: 'no creds' },
    source:
      'the endpoint is the local default: no --endpoint, no LETHE_ENDPOINT, and no ApiUrl from stack Lethe (no creds)',
    hint: 'hint: start the local stack with `npm start`, or set LETHE_ENDPOINT',
  },
])('an endpoint from $choice.source', ({ choice, source, hint }) => {
  it('says where it came from and what to do when it does not answer', () => {
    expect(describeSource(choice)).toBe(source);
    expect(unreachableHint(choice)).toBe(hint);
  });
});
