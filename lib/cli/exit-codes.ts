/** Exit codes of `lethe`, one per kind of failure a script may want to tell apart. */
export const EXIT = {
  ok: 0,
  unexpected: 1,
  usage: 2,
  notFound: 3,
  conflict: 4,
  deletionFailed: 5,
  unreachable: 6,
  clientError: 7,
  noCredentials: 8,
  cancelled: 9,
  /** `lethe verify`: the signature does not hold for the certificate as it is. */
  invalidCertificate: 10,
  /** `lethe smoke`: a check of the scenario did not hold. */
  smokeFailed: 11,
  /** 128 + SIGINT, as shells report a command stopped by Ctrl-C. */
  interrupted: 130,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** What each code means, as `lethe --help`, docs/cli.md and the README print it. */
export const EXIT_MEANINGS: ReadonlyArray<readonly [ExitCode, string]> = [
  [EXIT.ok, 'success (for --wait: the deletion COMPLETED)'],
  [EXIT.unexpected, 'unexpected error, including a 5xx from the API'],
  [EXIT.usage, 'usage error: unknown command or option, bad name, unreadable file'],
  [EXIT.notFound, 'not found (404): no such stream or deletion'],
  [EXIT.conflict, 'conflict (409): the stream is being deleted, or the deletion is not retryable'],
  [EXIT.deletionFailed, 'the deletion ended FAILED (--wait, or a FAILED receipt)'],
  [EXIT.unreachable, "cannot reach the endpoint, or what answers is not Lethe's API"],
  [EXIT.clientError, 'any other 4xx: invalid input (400), forbidden (403), too large (413)'],
  [
    EXIT.noCredentials,
    'no AWS credentials (or region) to sign a request to a non-loopback endpoint',
  ],
  [EXIT.cancelled, 'the deletion was CANCELLED (--wait, or a CANCELLED receipt)'],
  [EXIT.invalidCertificate, 'the certificate does not verify (tampered, or another key)'],
  [EXIT.smokeFailed, 'smoke: a check did not hold (the step and why are on stderr)'],
  [EXIT.interrupted, 'interrupted by Ctrl-C while waiting: the deletion (or plan) goes on'],
];

/** The exit code of an HTTP error status. */
export function exitCodeForStatus(status: number): ExitCode {
  if (status === 404) return EXIT.notFound;
  if (status === 409) return EXIT.conflict;
  if (status >= 400 && status < 500) return EXIT.clientError;
  return EXIT.unexpected;
}
