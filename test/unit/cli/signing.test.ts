import { describe, expect, it } from 'vitest';
import { run } from '../../../lib/cli/main.ts';
import { createSigner, needsSigning, regionOfHost } from '../../../lib/cli/signing.ts';
import { cliDependencies, fakeFetch } from '../../helpers/cli.ts';

const EXAMPLE_CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
};

describe.each<[string, boolean]>([
  ['http://127.0.0.1:3000', false],
  ['http://127.8.9.10:3000', false],
  ['http://localhost:3000', false],
  ['http://api.localhost', false],
  ['http://[::1]:3000', false],
  ['https://abc123.execute-api.eu-west-1.amazonaws.com/prod', true],
  ['https://lethe.example.com', true],
  ['http://10.0.0.5:3000', true],
  ['http://127.0.0.1.example.com', true],
])('an endpoint %s', (endpoint, signed) => {
  it(signed ? 'is signed' : 'is loopback, not signed', () => {
    expect(needsSigning(new URL(endpoint))).toBe(signed);
  });
});

describe('the signing region', () => {
  it('is read from an execute-api host name', () => {
    expect(regionOfHost(new URL('https://abc123.execute-api.eu-west-1.amazonaws.com/prod'))).toBe(
      'eu-west-1',
    );
  });

  it('is not guessed from any other host', () => {
    expect(regionOfHost(new URL('https://lethe.example.com'))).toBeUndefined();
  });
});

describe('the signer', () => {
  it('signs the AWS SigV4 test suite request get-vanilla to the published signature', async () => {
    // Prepare
    const sign = createSigner({
      region: 'us-east-1',
      service: 'service',
      credentials: async () => EXAMPLE_CREDENTIALS,
      now: () => new Date('2015-08-30T12:36:00Z'),
    });

    // Act
    const headers = await sign({
      method: 'GET',
      url: new URL('https://example.amazonaws.com/'),
      headers: {},
    });

    // Assess
    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, ' +
        'SignedHeaders=host;x-amz-date, ' +
        'Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31',
    );
    expect(headers['x-amz-date']).toBe('20150830T123600Z');
  });

  it('signs for execute-api with the session token, and the body changes the signature', async () => {
    // Prepare
    const sign = createSigner({
      region: 'eu-west-1',
      credentials: async () => ({ ...EXAMPLE_CREDENTIALS, sessionToken: 'TOKEN' }),
      now: () => new Date('2026-03-01T12:00:00Z'),
    });
    const request = (body: string) => ({
      method: 'POST',
      url: new URL(
        'https://abc.execute-api.eu-west-1.amazonaws.com/prod/v1/tenants/acme/streams/logs/events',
      ),
      headers: { 'content-type': 'application/json' },
      body: new TextEncoder().encode(body),
    });

    // Act
    const one = await sign(request('[1]'));
    const two = await sign(request('[2]'));

    // Assess
    expect(one['x-amz-security-token']).toBe('TOKEN');
    expect(one.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20260301\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-security-token, Signature=[0-9a-f]{64}$/,
    );
    expect(two.authorization).not.toBe(one.authorization);
  });
});

describe('lethe deciding whether to sign', () => {
  const stream = {
    tenant: 'acme',
    stream: 'logs',
    state: 'ACTIVE',
    generation: 1,
    location: 's3://lethe-data/streams/acme/logs/1/',
    createdAt: '2026-02-01T00:00:00.000Z',
  };

  it('sends no signature to the local stack', async () => {
    // Prepare
    const api = fakeFetch(() => ({ status: 200, body: stream }));
    const { deps } = cliDependencies({ fetch: api.fetch });

    // Act
    const code = await run(
      ['streams', 'get', 'acme/logs', '--endpoint', 'http://127.0.0.1:3000'],
      deps,
    );

    // Assess
    expect(code).toBe(0);
    expect(api.sent[0]?.headers).toEqual({ accept: 'application/json' });
  });

  it('signs for a deployed API with the default chain and the region of its host', async () => {
    // Prepare
    const api = fakeFetch(() => ({ status: 200, body: stream }));
    const { deps } = cliDependencies({
      fetch: api.fetch,
      credentials: () => async () => EXAMPLE_CREDENTIALS,
    });

    // Act
    const code = await run(
      [
        'streams',
        'get',
        'acme/logs',
        '--endpoint',
        'https://abc.execute-api.ap-southeast-2.amazonaws.com/prod/',
      ],
      deps,
    );

    // Assess
    expect(code).toBe(0);
    expect(api.sent[0]?.url).toBe(
      'https://abc.execute-api.ap-southeast-2.amazonaws.com/prod/v1/tenants/acme/streams/logs',
    );
    expect(api.sent[0]?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/ap-southeast-2\/execute-api\/aws4_request, SignedHeaders=accept;host;x-amz-date, Signature=[0-9a-f]{64}$/,
    );
  });

  it('uses the configured region for a host that names none', async () => {
    // Prepare
    const api = fakeFetch(() => ({ status: 200, body: stream }));
    const { deps } = cliDependencies({
      fetch: api.fetch,
      credentials: () => async () => EXAMPLE_CREDENTIALS,
      configuredRegion: async () => 'us-west-2',
    });

    // Act
    await run(['streams', 'get', 'acme/logs', '--endpoint', 'https://lethe.example.com'], deps);

    // Assess
    expect(api.sent[0]?.headers.authorization).toContain('/us-west-2/execute-api/aws4_request');
  });

  it('exits 8 and sends nothing when there are no credentials', async () => {
    // Prepare
    const api = fakeFetch(() => ({ status: 200, body: stream }));
    const { deps, stderr } = cliDependencies({ fetch: api.fetch });

    // Act
    const code = await run(
      [
        'streams',
        'get',
        'acme/logs',
        '--endpoint',
        'https://abc.execute-api.eu-west-1.amazonaws.com/prod',
      ],
      deps,
    );

    // Assess
    expect(code).toBe(8);
    expect(api.sent).toEqual([]);
    expect(stderr.text()).toBe(
      'lethe: no AWS credentials to sign requests to abc.execute-api.eu-west-1.amazonaws.com with: no credentials in unit tests\n',
    );
  });
});
