import { type CertificateKey, verifyCertificate } from '../core/index.ts';
import type { Command } from './args.ts';
import { ApiError, type LetheClient } from './client.ts';
import { EXIT, type ExitCode } from './exit-codes.ts';
import { plural } from './progress.ts';
import {
  parsePublicKey,
  parseSavedCertificate,
  type SavedCertificate,
  textOf,
} from './saved-certificate.ts';
import type { Output } from './status-line.ts';
import { inputName, UsageError } from './values.ts';

/** Writes `text` to `file`; a file that cannot be written is a UsageError. */
export type WriteOutput = (file: string, text: string) => Promise<void>;

/** What the certificate commands need: the client, stdout, and files to write. */
export interface CertificateContext {
  readonly client: Pick<LetheClient, 'getCertificate' | 'getCertificateKey'>;
  readonly json: boolean;
  readonly stdout: Output;
  readonly writeOutput: WriteOutput;
}

/** What `lethe verify` needs: no client until a key must be fetched, and maybe never. */
export interface VerifyContext {
  readonly json: boolean;
  readonly stdout: Output;
  /** The bytes of FILE, or of stdin for `-`. */
  readonly readInput: (file: string) => Promise<Uint8Array>;
  /** The public key that signed with `keyId`, from the API. */
  readonly keyFor: (keyId: string) => Promise<CertificateKey>;
  /** Where a note goes that is not the verdict (that the key came from the API). */
  readonly stderr?: Output;
}

/** Writes `text` to `out`, or to stdout without it; says where it went unless `--json`. */
async function deliver(
  text: string,
  out: string | undefined,
  saved: string,
  context: CertificateContext,
): Promise<void> {
  // `-` is stdout, as it is stdin where a file is read.
  if (out === undefined || out === '-') {
    context.stdout.write(text);
    return;
  }
  await context.writeOutput(out, text);
  if (!context.json) context.stdout.write(saved);
}

/**
 * `lethe deletions certificate`: the API's whole answer (certificate, signature, algorithm,
 * keyId) as pretty JSON, to stdout or `--out FILE`, as `lethe verify` reads it back.
 */
export async function saveCertificate(
  command: Extract<Command, { kind: 'deletions.certificate' }>,
  context: CertificateContext,
): Promise<ExitCode> {
  const { tenant, deletionId, out } = command;
  let body: Awaited<ReturnType<LetheClient['getCertificate']>>['body'];
  try {
    body = (await context.client.getCertificate(tenant, deletionId)).body;
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'DeletionNotCompleted') throw error;
    // A CANCELLED deletion never completes: it deleted nothing, and its receipt says so.
    throw error.withHints([
      / is CANCELLED:/.test(error.message)
        ? `a cancelled deletion deleted nothing and will not complete: its receipt says so, lethe deletions get ${tenant} ${deletionId}`
        : `a deletion has a certificate once it is COMPLETED: follow it with lethe deletions get ${tenant} ${deletionId}`,
    ]);
  }
  const { certificate } = body;
  const saved = [
    `saved the certificate of deletion ${deletionId} (${certificate.tenant}/${certificate.stream}, ${plural(certificate.objectsDeleted, 'object')}) to ${out}`,
    `check it: lethe verify ${out}`,
    '',
  ].join('\n');
  await deliver(`${JSON.stringify(body, null, 2)}\n`, out, saved, context);
  return EXIT.ok;
}

/** `lethe certificate-key`: the PEM (the whole JSON with `--json`), to stdout or `--out FILE`. */
export async function saveCertificateKey(
  command: Extract<Command, { kind: 'certificate-key' }>,
  context: CertificateContext,
): Promise<ExitCode> {
  const { body } = await context.client.getCertificateKey(command.keyId);
  const pem = body.publicKeyPem.endsWith('\n') ? body.publicKeyPem : `${body.publicKeyPem}\n`;
  const saved = [
    `saved the public key ${body.keyId} to ${command.out}`,
    `verify offline: lethe verify FILE --key ${command.out}`,
    '',
  ].join('\n');
  await deliver(context.json ? `${JSON.stringify(body)}\n` : pem, command.out, saved, context);
  return EXIT.ok;
}

/** The key that signed, from the API; a key it never had is most likely another deployment's. */
async function fetchKey(keyId: string, context: VerifyContext): Promise<string> {
  try {
    return (await context.keyFor(keyId)).publicKeyPem;
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'CertificateKeyNotFound') throw error;
    throw error.withHints([
      "hint: this API never signed with that key: is the certificate another deployment's? Verify it against that deployment, or offline with --key PEM_FILE",
    ]);
  }
}

/**
 * `lethe verify FILE [--key PEM_FILE]`: checks the signature of a saved certificate against the
 * key of `--key` (offline: nothing is sent), or else the key the API publishes for its keyId.
 * Exit 0 when it verifies, 10 when it does not.
 */
export async function verify(
  command: Extract<Command, { kind: 'verify' }>,
  context: VerifyContext,
): Promise<ExitCode> {
  if (command.file === '-' && command.key === '-') {
    throw new UsageError('FILE and --key cannot both be - (stdin)');
  }
  const decode = async (file: string) => textOf(await context.readInput(file));
  const { document, saved } = parseSavedCertificate(await decode(command.file), command.file);
  // Who signed, as far as this check can vouch: the key the API keeps under the certificate's
  // keyId, the keyId of a key's JSON (which must be the certificate's), or a PEM file's key.
  let signer: Signer = { keyId: saved.keyId };
  let pem: string;
  if (command.key === undefined) {
    pem = await fetchKey(saved.keyId, context);
    // Not offline: say so, and how to be, unless a script reads the JSON.
    if (!context.json) {
      context.stderr?.write(
        `the key was fetched from the API; to verify with nothing sent, save it once (lethe certificate-key --key-id ${saved.keyId} --out lethe-key.pem) and pass --key lethe-key.pem\n`,
      );
    }
  } else {
    const key = parsePublicKey(await decode(command.key), command.key);
    pem = key.pem;
    signer = key.keyId === undefined ? { keyFile: inputName(command.key) } : { keyId: key.keyId };
  }
  const sameKey = signer.keyId === undefined || signer.keyId === saved.keyId;
  const verdict = { saved, signer, valid: sameKey && verifyCertificate(document, pem) };
  context.stdout.write(context.json ? verdictJson(verdict) : verdictLine(verdict));
  return verdict.valid ? EXIT.ok : EXIT.invalidCertificate;
}

/** The key a verdict names: by id when the check vouches for it, else the file it came from. */
type Signer = { keyId: string; keyFile?: never } | { keyFile: string; keyId?: never };

interface Verdict {
  saved: SavedCertificate;
  signer: Signer;
  valid: boolean;
}

const signerOf = ({ keyId, keyFile }: Signer) => keyId ?? `the key in ${keyFile}`;

/** `valid: deletion ID of TENANT/STREAM, ...`, or `INVALID: ...`. */
export function verdictLine({ saved, signer, valid }: Verdict): string {
  const { certificate: c, keyId } = saved;
  if (signer.keyId !== undefined && signer.keyId !== keyId) {
    return `INVALID: the certificate says it was signed by ${keyId}, but the key given is ${signer.keyId}\n`;
  }
  if (!valid) {
    return `INVALID: the certificate was changed after it was signed, or was not signed by ${signerOf(signer)}\n`;
  }
  const scope = c.partitionsBefore ? ` (partitions before ${c.partitionsBefore})` : '';
  return `valid: deletion ${c.deletionId} of ${c.tenant}/${c.stream}${scope}, ${plural(c.objectsDeleted, 'object')}, completed ${c.completedAt}, signed by ${signerOf(signer)}\n`;
}

function verdictJson({ saved, signer, valid }: Verdict): string {
  const { deletionId, tenant, stream, partitionsBefore, objectsDeleted, completedAt } =
    saved.certificate;
  const scope = partitionsBefore ? { partitionsBefore } : {};
  const verdict = { valid, deletionId, tenant, stream, ...scope, objectsDeleted, completedAt };
  return `${JSON.stringify({ ...verdict, ...signer })}\n`;
}
