import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../lib/cli/args.ts';
import { run } from '../../../lib/cli/main.ts';
import { parsePublicKey, parseSavedCertificate } from '../../../lib/cli/saved-certificate.ts';
import { certificateOf, type SignedCertificate, toReceipt } from '../../../lib/core/index.ts';
import {
  apiError,
  cliDependencies,
  type FakeReply,
  fakeFetch,
  LOCAL,
  lethe,
  line,
  type SentRequest,
} from '../../helpers/cli.ts';
import { aDeletion, DELETION_ID } from '../../helpers/records.ts';
import { localSigner } from '../../helpers/signer.ts';

const KEY_ID = 'arn:aws:kms:eu-west-1:000000000000:key/test-key';
const signer = localSigner(KEY_ID);
const other = localSigner('arn:aws:kms:eu-west-1:000000000000:key/other-key');
const COMPLETED_AT = '2026-03-01T12:00:10.000Z';
const signed: SignedCertificate = await signer.sign(
  certificateOf(
    toReceipt(
      aDeletion({
        state: 'COMPLETED',
        objectsDeleted: 1_602,
        bytesDeleted: 33_000,
        completedAt: COMPLETED_AT,
      }),
    ),
  ),
);
const SAVED = `${JSON.stringify(signed, null, 2)}\n`;
const VALID = `valid: deletion ${DELETION_ID} of acme/logs, 1,602 objects, completed ${COMPLETED_AT}, signed by ${KEY_ID}\n`;
const INVALID = `INVALID: the certificate was changed after it was signed, or was not signed by ${KEY_ID}\n`;
/** Offline against a PEM file, which names no key id: the verdict names the file, not the id. */
const VALID_BY_PEM = VALID.replace(`signed by ${KEY_ID}`, 'signed by the key in key.pem');
const INVALID_BY_PEM = INVALID.replace(`signed by ${KEY_ID}`, 'signed by the key in key.pem');
const CERTIFICATE_URL = `http://127.0.0.1:3000/v1/tenants/acme/deletions/${DELETION_ID}/certificate`;
const KEY_URL = 'http://127.0.0.1:3000/v1/certificate-key';

/** Files in memory: what `--out` writes, what FILE and `--key` read. */
function memoryFiles(initial: Record<string, string | Uint8Array> = {}) {
  const files = new Map(Object.entries(initial));
  return {
    files,
    writeOutput: async (file: string, text: string) => {
      files.set(file, text);
    },
    readInput: async (file: string) => {
      const content = files.get(file);
      if (content === undefined) throw new UsageError(`cannot read ${file}: ENOENT`);
      return typeof content === 'string' ? new TextEncoder().encode(content) : content;
    },
  };
}

/** Runs lethe with files in memory and an API answered by `reply`. */
async function withFiles(
  argv: string[],
  files: ReturnType<typeof memoryFiles>,
  reply: (request: SentRequest) => FakeReply = () => ({ status: 500, body: 'unexpected request' }),
) {
  const api = fakeFetch(reply);
  const { deps, stdout, stderr } = cliDependencies({
    fetch: api.fetch,
    writeOutput: files.writeOutput,
    readInput: files.readInput,
  });
  const code = await run(argv, deps);
  return { code, stdout: stdout.text(), stderr: stderr.text(), sent: api.sent };
}

describe('lethe deletions certificate', () => {
  it('prints the whole signed certificate as pretty JSON', async () => {
    // Act
    const result = await lethe(['deletions', 'certificate', 'acme', DELETION_ID], () => ({
      status: 200,
      body: signed,
    }));

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent.map(line)).toEqual([`GET ${CERTIFICATE_URL}`]);
    expect(result.stdout).toBe(SAVED);
    expect(result.stdout).toMatch(/^\{\n {2}"certificate": \{\n {4}"version": 1,/);
  });

  it('with --out writes it to the file and says how to check it', async () => {
    // Arrange
    const files = memoryFiles();

    // Act
    const result = await withFiles(
      ['deletions', 'certificate', 'acme', DELETION_ID, '--out', 'cert.json', ...LOCAL],
      files,
      () => ({ status: 200, body: signed }),
    );

    // Assess
    expect(result.code).toBe(0);
    expect(files.files.get('cert.json')).toBe(SAVED);
    expect(result.stdout).toBe(
      [
        `saved the certificate of deletion ${DELETION_ID} (acme/logs, 1,602 objects) to cert.json`,
        'check it: lethe verify cert.json',
        '',
      ].join('\n'),
    );
  });

  it('with --out and --json writes the file and prints nothing', async () => {
    // Arrange
    const files = memoryFiles();

    // Act
    const result = await withFiles(
      ['deletions', 'certificate', 'acme', DELETION_ID, '--out', 'c.json', '--json', ...LOCAL],
      files,
      () => ({ status: 200, body: signed }),
    );

    // Assess
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('');
    expect(files.files.get('c.json')).toBe(SAVED);
  });

  it('exits 4 before the deletion has COMPLETED, and says how to follow it', async () => {
    // Arrange
    const message = `deletion ${DELETION_ID} is RUNNING: only a COMPLETED deletion has a certificate`;

    // Act
    const result = await lethe(['deletions', 'certificate', 'acme', DELETION_ID], () =>
      apiError(409, 'DeletionNotCompleted', message),
    );

    // Assess
    expect(result.code).toBe(4);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      [
        `lethe: DeletionNotCompleted: ${message} (HTTP 409)`,
        `a deletion has a certificate once it is COMPLETED: follow it with lethe deletions get acme ${DELETION_ID}`,
        '',
      ].join('\n'),
    );
  });

  it('says a CANCELLED deletion will have no certificate, instead of how to follow it', async () => {
    // Arrange
    const message = `deletion ${DELETION_ID} is CANCELLED: only a COMPLETED deletion has a certificate`;

    // Act
    const result = await lethe(['deletions', 'certificate', 'acme', DELETION_ID], () =>
      apiError(409, 'DeletionNotCompleted', message),
    );

    // Assess
    expect(result.code).toBe(4);
    expect(result.stderr).toBe(
      [
        `lethe: DeletionNotCompleted: ${message} (HTTP 409)`,
        `a cancelled deletion deleted nothing and will not complete: its receipt says so, lethe deletions get acme ${DELETION_ID}`,
        '',
      ].join('\n'),
    );
  });

  it('takes --out - for stdout, as - is stdin where a file is read', async () => {
    // Arrange
    const files = memoryFiles({});

    // Act
    const result = await withFiles(
      ['deletions', 'certificate', 'acme', DELETION_ID, '--out', '-', ...LOCAL],
      files,
      () => ({ status: 200, body: signed }),
    );

    // Assess
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(SAVED);
    expect(files.files.has('-')).toBe(false);
  });

  it('exits 2 when the file of --out cannot be written', async () => {
    // Arrange: the real file system, a folder that does not exist.
    const api = fakeFetch(() => ({ status: 200, body: signed }));
    const { deps, stderr } = cliDependencies({ fetch: api.fetch });

    // Act
    const code = await run(
      ['deletions', 'certificate', 'acme', DELETION_ID, '--out', '/no/such/dir/c.json', ...LOCAL],
      deps,
    );

    // Assess
    expect(code).toBe(2);
    expect(stderr.text()).toMatch(/^lethe: cannot write \/no\/such\/dir\/c\.json: ENOENT/);
  });
});

describe('lethe certificate-key', () => {
  it('prints the PEM of the key that signs now', async () => {
    // Act
    const result = await lethe(['certificate-key'], () => ({ status: 200, body: signer.key }));

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent.map(line)).toEqual([`GET ${KEY_URL}`]);
    expect(result.stdout).toBe(signer.key.publicKeyPem);
    expect(result.stdout).toMatch(
      /^-----BEGIN PUBLIC KEY-----\n[\s\S]+-----END PUBLIC KEY-----\n$/,
    );
  });

  it('asks for the key of --key-id, and prints the whole body with --json', async () => {
    // Act
    const result = await lethe(['certificate-key', '--key-id', KEY_ID, '--json'], () => ({
      status: 200,
      body: signer.key,
    }));

    // Assess
    expect(result.sent.map(line)).toEqual([
      `GET ${KEY_URL}?keyId=arn%3Aaws%3Akms%3Aeu-west-1%3A000000000000%3Akey%2Ftest-key`,
    ]);
    expect(JSON.parse(result.stdout)).toEqual(signer.key);
  });

  it('adds the newline a PEM without one lacks', async () => {
    // Act
    const result = await lethe(['certificate-key'], () => ({
      status: 200,
      body: { ...signer.key, publicKeyPem: signer.key.publicKeyPem.trimEnd() },
    }));

    // Assess
    expect(result.stdout).toBe(signer.key.publicKeyPem);
  });

  it('with --out writes the PEM to the file and says how to verify offline', async () => {
    // Arrange
    const files = memoryFiles();

    // Act
    const result = await withFiles(
      ['certificate-key', '--out', 'key.pem', ...LOCAL],
      files,
      () => ({
        status: 200,
        body: signer.key,
      }),
    );

    // Assess
    expect(result.code).toBe(0);
    expect(files.files.get('key.pem')).toBe(signer.key.publicKeyPem);
    expect(result.stdout).toBe(
      `saved the public key ${KEY_ID} to key.pem\nverify offline: lethe verify FILE --key key.pem\n`,
    );
  });

  it('exits 3 for a key that never signed', async () => {
    // Act
    const result = await lethe(['certificate-key', '--key-id', 'nope'], () =>
      apiError(404, 'CertificateKeyNotFound', 'no certificate was ever signed with key nope'),
    );

    // Assess
    expect(result.code).toBe(3);
  });
});

describe('lethe verify --key (offline)', () => {
  // A non-loopback endpoint and no credentials: any request, or even signing one, would fail.
  const OFFLINE = ['--endpoint', 'https://lethe.invalid/prod'];

  it('says whose deletion the certificate proves and exits 0, sending nothing', async () => {
    // Arrange
    const files = memoryFiles({ 'cert.json': SAVED, 'key.pem': signer.key.publicKeyPem });

    // Act
    const result = await withFiles(['verify', 'cert.json', '--key', 'key.pem', ...OFFLINE], files);

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent).toEqual([]);
    expect(result.stdout).toBe(VALID_BY_PEM);
    expect(result.stderr).toBe('');
  });

  it.each(['1602.0', '1.602e3'])(
    'verifies a count written %s, which shows the signed value exactly',
    async (written) => {
      // Arrange
      const text = SAVED.replace('"objectsDeleted": 1602', `"objectsDeleted": ${written}`);
      const files = memoryFiles({ 'cert.json': text, 'key.pem': signer.key.publicKeyPem });

      // Act
      const result = await withFiles(
        ['verify', 'cert.json', '--key', 'key.pem', ...OFFLINE],
        files,
      );

      // Assess
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(VALID_BY_PEM);
    },
  );

  it('reads digits inside a string as a string, not as a number written inexactly', async () => {
    // Arrange: a member a certificate does not have, holding what would be an inexact number
    const text = SAVED.replace('"version": 1,', '"version": 1, "note": "3.0000000000000001",');
    const files = memoryFiles({ 'cert.json': text, 'key.pem': signer.key.publicKeyPem });

    // Act
    const result = await withFiles(['verify', 'cert.json', '--key', 'key.pem', ...OFFLINE], files);

    // Assess: refused for the member, not for the digits
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('it holds certificate.note');
    expect(result.stderr).not.toContain('which JSON reads as');
  });

  it("names a partition deletion's cutoff, which its signature covers", async () => {
    // Arrange
    const receipt = toReceipt(
      aDeletion({ state: 'COMPLETED', before: '2026-02-01', completedAt: COMPLETED_AT }),
    );
    const partitions = `${JSON.stringify(await signer.sign(certificateOf(receipt)), null, 2)}\n`;
    const moved = partitions.replace(
      '"partitionsBefore": "2026-02-01"',
      '"partitionsBefore": "2026-03-01"',
    );
    const files = memoryFiles({
      'cert.json': partitions,
      'moved.json': moved,
      'key.pem': signer.key.publicKeyPem,
    });

    // Act
    const result = await withFiles(['verify', 'cert.json', '--key', 'key.pem', ...OFFLINE], files);
    const json = await withFiles(
      ['verify', 'cert.json', '--key', 'key.pem', '--json', ...OFFLINE],
      files,
    );
    const tampered = await withFiles(
      ['verify', 'moved.json', '--key', 'key.pem', ...OFFLINE],
      files,
    );

    // Assess
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      `valid: deletion ${DELETION_ID} of acme/logs (partitions before 2026-02-01), 0 objects, completed ${COMPLETED_AT}, signed by the key in key.pem\n`,
    );
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: true, partitionsBefore: '2026-02-01' });
    expect(moved).not.toBe(partitions);
    expect(tampered.code).toBe(10);
  });

  it('exits 10 when one digit of the certificate was changed', async () => {
    // Arrange
    const tampered = SAVED.replace('"objectsDeleted": 1602', '"objectsDeleted": 1603');
    const files = memoryFiles({ 'cert.json': tampered, 'key.pem': signer.key.publicKeyPem });

    // Act
    const result = await withFiles(['verify', 'cert.json', '--key', 'key.pem', ...OFFLINE], files);

    // Assess
    expect(tampered).not.toBe(SAVED);
    expect(result.code).toBe(10);
    expect(result.stdout).toBe(INVALID_BY_PEM);
  });

  it('exits 10 against another key', async () => {
    // Arrange
    const files = memoryFiles({ 'cert.json': SAVED, 'key.pem': other.key.publicKeyPem });

    // Act
    const result = await withFiles(['verify', 'cert.json', '--key', 'key.pem', ...OFFLINE], files);

    // Assess
    expect(result.code).toBe(10);
    expect(result.stdout).toBe(INVALID_BY_PEM);
  });

  it("never names a signer it did not check: a file's keyId is not the PEM key's", async () => {
    // Arrange: a valid certificate whose keyId (outside the signed part) was changed
    const renamed = SAVED.replace(
      `"keyId": "${KEY_ID}"`,
      '"keyId": "arn:aws:kms:eu-west-1:111122223333:key/other"',
    );
    const files = memoryFiles({ 'cert.json': renamed, 'key.pem': signer.key.publicKeyPem });

    // Act
    const result = await withFiles(['verify', 'cert.json', '--key', 'key.pem', ...OFFLINE], files);

    // Assess: the signature holds for the PEM's key, and only that key is named
    expect(renamed).not.toBe(SAVED);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(VALID_BY_PEM);
    expect(result.stdout).not.toContain('key/other');
  });

  it("exits 10 when the key's JSON names another key than the certificate", async () => {
    // Arrange: the right public key, but under another id than the certificate's
    const renamed = SAVED.replace(
      `"keyId": "${KEY_ID}"`,
      '"keyId": "arn:aws:kms:eu-west-1:111122223333:key/other"',
    );
    const files = memoryFiles({ 'cert.json': renamed, 'key.json': JSON.stringify(signer.key) });

    // Act
    const result = await withFiles(['verify', 'cert.json', '--key', 'key.json', ...OFFLINE], files);

    // Assess
    expect(result.code).toBe(10);
    expect(result.stdout).toBe(
      `INVALID: the certificate says it was signed by arn:aws:kms:eu-west-1:111122223333:key/other, but the key given is ${KEY_ID}\n`,
    );
  });

  it('refuses a field added to the signed part, before any signature is checked', async () => {
    // Arrange
    const added = { ...signed, certificate: { ...signed.certificate, note: 'kept a copy' } };
    const files = memoryFiles({
      'cert.json': JSON.stringify(added),
      'key.pem': signer.key.publicKeyPem,
    });

    // Act
    const result = await withFiles(['verify', 'cert.json', '--key', 'key.pem', ...OFFLINE], files);

    // Assess
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('it holds certificate.note');
  });

  it('verifies a certificate saved as UTF-16 with its byte-order mark (PowerShell 5.1 writes it)', async () => {
    // Arrange
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(SAVED, 'utf16le')]);
    const files = memoryFiles({ 'cert.json': utf16, 'key.pem': signer.key.publicKeyPem });

    // Act
    const result = await withFiles(['verify', 'cert.json', '--key', 'key.pem', ...OFFLINE], files);

    // Assess
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^valid: /);
  });

  it('reads the certificate from stdin with -, and takes the JSON of certificate-key --json', async () => {
    // Arrange
    const files = memoryFiles({ '-': SAVED, 'key.json': JSON.stringify(signer.key) });

    // Act
    const result = await withFiles(['verify', '-', '--key', 'key.json', ...OFFLINE], files);

    // Assess
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(VALID);
  });

  it('prints a verdict object with --json', async () => {
    // Arrange
    const files = memoryFiles({ 'cert.json': SAVED, 'key.pem': signer.key.publicKeyPem });

    // Act
    const result = await withFiles(
      ['verify', 'cert.json', '--key', 'key.pem', '--json', ...OFFLINE],
      files,
    );

    // Assess
    expect(JSON.parse(result.stdout)).toEqual({
      valid: true,
      deletionId: DELETION_ID,
      tenant: 'acme',
      stream: 'logs',
      objectsDeleted: 1_602,
      completedAt: COMPLETED_AT,
      keyFile: 'key.pem',
    });
  });
});

describe('lethe verify (key from the API)', () => {
  it("fetches the key of the certificate's keyId and checks locally", async () => {
    // Arrange
    const files = memoryFiles({ 'cert.json': SAVED });

    // Act
    const result = await withFiles(['verify', 'cert.json', ...LOCAL], files, () => ({
      status: 200,
      body: signer.key,
    }));

    // Assess
    expect(result.code).toBe(0);
    expect(result.sent.map(line)).toEqual([`GET ${KEY_URL}?keyId=${encodeURIComponent(KEY_ID)}`]);
    expect(result.stdout).toBe(VALID);
    // It was not offline: it says so, and how to be.
    expect(result.stderr).toBe(
      `the key was fetched from the API; to verify with nothing sent, save it once (lethe certificate-key --key-id ${KEY_ID} --out lethe-key.pem) and pass --key lethe-key.pem\n`,
    );
  });

  it('exits 10 when the published key does not verify the file', async () => {
    // Arrange
    const files = memoryFiles({ 'cert.json': SAVED });

    // Act
    const result = await withFiles(['verify', 'cert.json', ...LOCAL], files, () => ({
      status: 200,
      body: { ...other.key, keyId: KEY_ID },
    }));

    // Assess
    expect(result.code).toBe(10);
    expect(result.stdout).toBe(INVALID);
  });

  it("exits 3 with a hint for a key the API never signed with: another deployment's?", async () => {
    // Arrange
    const files = memoryFiles({ 'cert.json': SAVED });

    // Act
    const result = await withFiles(['verify', 'cert.json', ...LOCAL], files, () =>
      apiError(404, 'CertificateKeyNotFound', `no certificate was ever signed with key ${KEY_ID}`),
    );

    // Assess
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      [
        `lethe: CertificateKeyNotFound: no certificate was ever signed with key ${KEY_ID} (HTTP 404)`,
        "hint: this API never signed with that key: is the certificate another deployment's? Verify it against that deployment, or offline with --key PEM_FILE",
        '',
      ].join('\n'),
    );
  });

  it('reads and checks the file before it sends anything', async () => {
    // Arrange
    const files = memoryFiles({ 'cert.json': '{"certificate":' });

    // Act
    const result = await withFiles(['verify', 'cert.json', ...LOCAL], files);

    // Assess
    expect(result.code).toBe(2);
    expect(result.sent).toEqual([]);
  });
});

describe('a file that is not a certificate', () => {
  it.each<[string, string, RegExp]>([
    ['not JSON', 'hello', /^lethe: cert\.json is not JSON: Unexpected token/],
    [
      'an empty object',
      '{}',
      /^lethe: cert\.json is not a signed certificate: no certificate, no signature, no algorithm, no keyId \(/,
    ],
    ['an array', '[]', /^lethe: cert\.json is not a signed certificate: it is not a JSON object /],
    [
      'a count that is a string',
      SAVED.replace('"objectsDeleted": 1602', '"objectsDeleted": "1602"'),
      /^lethe: cert\.json is not a signed certificate: certificate\.objectsDeleted is not a whole number \(save one with lethe deletions certificate TENANT DELETION_ID --out FILE\)\n/,
    ],
    // What JSON.parse reads otherwise than the text shows: the signature would check another value.
    [
      'a member named twice (the first a decoy)',
      SAVED.replace('"version": 1,', '"version": 1, "tenant": "globex",'),
      /: it names "tenant" twice in one object \(/,
    ],
    [
      'a count no JSON reader holds exactly',
      SAVED.replace('"objectsDeleted": 1602', '"objectsDeleted": 9007199254740993'),
      /: certificate\.objectsDeleted is not a whole number \(/,
    ],
    [
      'a count written more exactly than JSON reads it (it would verify as 1602)',
      SAVED.replace('"objectsDeleted": 1602', '"objectsDeleted": 1602.0000000000001'),
      /: it writes 1602\.0000000000001, which JSON reads as 1602 \(/,
    ],
    [
      'a version written more exactly than JSON reads it',
      SAVED.replace('"version": 1', '"version": 1.0000000000000001'),
      /: it writes 1\.0000000000000001, which JSON reads as 1 \(/,
    ],
    [
      'a member beside the certificate',
      SAVED.replace('{', '{"state": "FAILED",'),
      /: it holds state \(/,
    ],
    [
      'a newer version of the format',
      SAVED.replace('"version": 1', '"version": 2'),
      /: its certificate\.version 2 is newer than this lethe reads \(1\): update lethe \(/,
    ],
    ['no version', SAVED.replace('"version": 1,', ''), /: certificate\.version is not 1 \(/],
    [
      'a signed field missing',
      SAVED.replace(/"generation": \d+,/, ''),
      /: no certificate\.generation \(/,
    ],
    [
      'no signature',
      JSON.stringify({ ...signed, signature: undefined }),
      /^lethe: cert\.json is not a signed certificate: no signature \(/,
    ],
  ])('exits 2 for %s, saying what is wrong', async (_, text, said) => {
    // Arrange
    const files = memoryFiles({ 'cert.json': text, 'key.pem': signer.key.publicKeyPem });

    // Act
    const result = await withFiles(['verify', 'cert.json', '--key', 'key.pem'], files);

    // Assess
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(said);
    expect(result.stderr).toMatch(/\nRun 'lethe --help' for usage\.\n$/);
  });

  it('exits 2 for a file that cannot be read', async () => {
    // Act
    const result = await withFiles(['verify', 'missing.json', '--key', 'key.pem'], memoryFiles());

    // Assess
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^lethe: cannot read missing\.json: ENOENT\n/);
  });

  it('exits 2 for a key file that is not a PEM public key', async () => {
    // Arrange
    const files = memoryFiles({ 'cert.json': SAVED, 'key.pem': 'not a key' });

    // Act
    const result = await withFiles(['verify', 'cert.json', '--key', 'key.pem'], files);

    // Assess
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^lethe: key\.pem is not a PEM public key \(save one with lethe certificate-key --out FILE\)\n/,
    );
  });

  it('exits 2 when both the certificate and the key would come from stdin', async () => {
    // Act
    const result = await withFiles(['verify', '-', '--key', '-'], memoryFiles({ '-': SAVED }));

    // Assess
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^lethe: FILE and --key cannot both be - \(stdin\)\n/);
  });
});

describe('parsing a saved certificate', () => {
  it('keeps the document as it was read, for the signature to be checked against', () => {
    // Act
    const { document, saved } = parseSavedCertificate(SAVED, 'cert.json');

    // Assess
    expect(document).toEqual(JSON.parse(SAVED));
    expect(saved.keyId).toBe(KEY_ID);
  });

  it('names stdin as such', () => {
    expect(() => parseSavedCertificate('nope', '-')).toThrow(/^stdin is not JSON: /);
  });

  it('takes a public key from JSON that carries publicKeyPem, and refuses JSON without', () => {
    expect(parsePublicKey(JSON.stringify(signer.key), 'k.json')).toEqual({
      pem: signer.key.publicKeyPem,
      keyId: KEY_ID,
    });
    expect(parsePublicKey(signer.key.publicKeyPem, 'k.pem')).toEqual({
      pem: signer.key.publicKeyPem,
    });
    expect(() => parsePublicKey('{"keyId":"x"}', 'k.json')).toThrow(UsageError);
  });
});
