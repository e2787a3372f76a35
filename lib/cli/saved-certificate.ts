import { createPublicKey } from 'node:crypto';
import { duplicateName } from '../core/index.ts';
import { inputName, UsageError } from './values.ts';

/** The fields of a saved certificate that `lethe verify` reads, and says. */
export interface SavedCertificate {
  certificate: {
    deletionId: string;
    tenant: string;
    stream: string;
    location: string;
    /** A partition deletion's cutoff day. */
    partitionsBefore?: string;
    objectsDeleted: number;
    bytesDeleted: number;
    completedAt: string;
  };
  signature: string;
  algorithm: string;
  keyId: string;
}

/** The version of the certificate format this `lethe` reads. */
const VERSION = 1;

type Kind = 'object' | 'string' | 'count';

/** What a saved certificate holds, and nothing else: the API's answer, as it was saved. */
const SAVED: Readonly<Record<string, Kind>> = {
  certificate: 'object',
  signature: 'string',
  algorithm: 'string',
  keyId: 'string',
};

/** The signed part of version 1, every member but `partitionsBefore` required. */
const SIGNED: Readonly<Record<string, Kind>> = {
  deletionId: 'string',
  tenant: 'string',
  stream: 'string',
  generation: 'count',
  location: 'string',
  objectsDeleted: 'count',
  bytesDeleted: 'count',
  multipartUploadsAborted: 'count',
  requestedAt: 'string',
  executeAfter: 'string',
  completedAt: 'string',
  verifiedAt: 'string',
  verified: 'string',
};
/** Checked on their own: the version first, and the cutoff only a partition deletion has. */
const BESIDE_SIGNED = new Set(['version', 'partitionsBefore']);

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The value at a dotted path, if every step on the way is an object. */
function at(value: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((here, key) => (isRecord(here) ? here[key] : undefined), value);
}

/** What is missing, malformed or extra among an object's members, one item each. */
function membersProblems(
  value: Record<string, unknown>,
  kinds: Readonly<Record<string, Kind>>,
  where: string,
  optional: ReadonlySet<string> = new Set(),
): string[] {
  const problems = Object.entries(kinds).flatMap(([name, kind]) => {
    const found = value[name];
    if (found === undefined) return [`no ${where}${name}`];
    if (kind === 'object' ? isRecord(found) : kind === 'string' && typeof found === 'string') {
      return [];
    }
    // A count a JSON reader could hold exactly: 9007199254740993 would read as ...992.
    if (kind === 'count' && Number.isSafeInteger(found) && (found as number) >= 0) return [];
    return [`${where}${name} is not ${kind === 'count' ? 'a whole number' : `a ${kind}`}`];
  });
  const extra = Object.keys(value).filter((name) => !(name in kinds) && !optional.has(name));
  if (extra.length > 0) problems.push(`it holds ${extra.map((n) => where + n).join(', ')}`);
  return problems;
}

/** What keeps a parsed document from being a saved certificate of version 1, one item each. */
function problemsOf(value: unknown): string[] {
  if (!isRecord(value)) return ['it is not a JSON object'];
  const problems = membersProblems(value, SAVED, '');
  const certificate = value.certificate;
  if (!isRecord(certificate)) return problems;
  if (certificate.version !== VERSION) {
    const newer = typeof certificate.version === 'number' && certificate.version > VERSION;
    return [
      newer
        ? `its certificate.version ${certificate.version} is newer than this lethe reads (${VERSION}): update lethe`
        : `certificate.version is not ${VERSION}`,
    ];
  }
  const signed = membersProblems(certificate, SIGNED, 'certificate.', BESIDE_SIGNED);
  const before = certificate.partitionsBefore;
  if (before !== undefined && typeof before !== 'string') {
    signed.push('certificate.partitionsBefore is not a string');
  }
  return [...problems, ...signed];
}

/**
 * A saved certificate, as `lethe deletions certificate` wrote it: the parsed document (what the
 * signature is checked against) and the fields `lethe verify` says. Only a document whose text
 * shows exactly what is checked is read: no member named twice (`JSON.parse` would check only
 * the last), none a certificate does not have, every count one JSON reads exactly.
 */
export function parseSavedCertificate(
  text: string,
  file: string,
): { document: unknown; saved: SavedCertificate } {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `${inputName(file)} is not JSON: ${error instanceof Error ? error.message : error}`,
    );
  }
  const twice = duplicateName(text);
  const inexact = inexactNumber(text);
  const problems = [
    ...(twice === undefined ? [] : [`it names ${JSON.stringify(twice)} twice in one object`]),
    ...(inexact === undefined
      ? []
      : [`it writes ${inexact}, which JSON reads as ${Number(inexact)}`]),
    ...problemsOf(document),
  ];
  if (problems.length > 0) {
    throw new UsageError(
      `${inputName(file)} is not a signed certificate: ${problems.join(', ')} (save one with lethe deletions certificate TENANT DELETION_ID --out FILE)`,
    );
  }
  return { document, saved: document as SavedCertificate };
}

/**
 * The first number the text writes more exactly than JSON reads it as a whole number
 * (`3.0000000000000001` reads as 3), if any: such a file would verify while its text showed
 * another number. A number JSON does not read as a whole number is left to the shape check
 * (every number of a certificate is a count); `3.0` and `3e0` show 3 exactly.
 */
function inexactNumber(text: string): string | undefined {
  // Strings first, so that digits inside them are skipped whole.
  for (const [token] of text.matchAll(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g)) {
    if (token.startsWith('"')) continue;
    const value = Number(token);
    if (!Number.isSafeInteger(value)) continue;
    const [, whole = '', fraction = '', exponent = '0'] =
      /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(token) ?? [];
    const scale = Number(exponent) - fraction.length;
    // A whole number's exponent is never far from its digits; anything else is not exact.
    if (Math.abs(scale) > 1_000) return token;
    const digits = BigInt(whole + fraction);
    const written =
      scale >= 0 ? { value: digits * 10n ** BigInt(scale), exact: true } : splitAt(digits, -scale);
    if (!written.exact || written.value !== BigInt(Math.abs(value))) return token;
  }
  return undefined;
}

/** `digits` divided by 10^places, and whether nothing is left over. */
function splitAt(digits: bigint, places: number): { value: bigint; exact: boolean } {
  const unit = 10n ** BigInt(places);
  return { value: digits / unit, exact: digits % unit === 0n };
}

/**
 * A public key as PEM, from a PEM file or the JSON of `lethe certificate-key --json`, with the
 * key's id when the JSON names it (a PEM file names none).
 */
export function parsePublicKey(text: string, file: string): { pem: string; keyId?: string } {
  let pem = text;
  let keyId: string | undefined;
  if (text.trimStart().startsWith('{')) {
    const json = safeJson(text);
    const found = at(json, 'publicKeyPem');
    pem = typeof found === 'string' ? found : '';
    const id = at(json, 'keyId');
    if (typeof id === 'string' && id !== '') keyId = id;
  }
  try {
    createPublicKey(pem);
    return keyId === undefined ? { pem } : { pem, keyId };
  } catch {
    throw new UsageError(
      `${inputName(file)} is not a PEM public key (save one with lethe certificate-key --out FILE)`,
    );
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * The text of a saved file: UTF-8 (a byte-order mark dropped), or UTF-16 with its byte-order
 * mark, as Windows PowerShell 5.1's `>` writes what it is given.
 */
export function textOf(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes);
  return new TextDecoder().decode(bytes);
}
