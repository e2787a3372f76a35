import { describe, expect, it, vi } from 'vitest';
import { EndpointError, resolveEndpoint, type StackLookup } from '../../../lib/cli/endpoint.ts';

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
    });
    expect(lookupStack).toHaveBeenCalledWith('Lethe');
  });

  it('then the local stack when there is no deployed stack to read', async () => {
    // Act
    const choice = await resolveEndpoint({ lookupStack: missing() });

    // Assess
    expect(choice).toEqual({ url: 'http://127.0.0.1:3000', source: 'local' });
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
  ])('refuses LETHE_ENDPOINT=%s', async (env, message) => {
    await expect(resolveEndpoint({ env, lookupStack: missing() })).rejects.toThrow(message);
  });
});
