import { DEFAULT_STACK, LOCAL_ENDPOINT } from './endpoint.ts';
import { EXIT_MEANINGS } from './exit-codes.ts';

export const HELP = `lethe: drive Lethe, the S3 stream deletion service, from a terminal

Usage:
  lethe streams create TENANT/STREAM        create a stream (or show it if it is ACTIVE)
  lethe streams get TENANT/STREAM           show a stream
  lethe streams list TENANT [--limit N] [--next-token T]
  lethe streams delete TENANT/STREAM [--wait]
  lethe delete TENANT/STREAM [--wait]       request a stream's deletion (same as streams delete)
  lethe ingest TENANT/STREAM FILE           store a JSON array of events (FILE - reads stdin)
  lethe deletions get TENANT DELETION_ID    show a deletion receipt
  lethe deletions retry TENANT DELETION_ID [--wait]   start a FAILED deletion again
  lethe health                              check that the API answers

Options:
  --wait            follow the deletion to its end: a live progress bar on a terminal
                    (objects deleted, objects/s, ETA when the total is known), a line every
                    few seconds otherwise, then the receipt summary
  --interval SECS   seconds between two reads of the receipt while waiting (default 1)
  --json            print the API's JSON response (the final receipt with --wait) and nothing
                    else on stdout; errors print the API's JSON error body
  --endpoint URL    the API (default: $LETHE_ENDPOINT, else the ApiUrl output of the deployed
                    stack, else ${LOCAL_ENDPOINT}, the local stack of npm start)
  --stack NAME      the CloudFormation stack to read ApiUrl from (default ${DEFAULT_STACK})
  --region REGION   region for the stack and for signing (default: the API's host name,
                    then AWS_REGION and the AWS profile)
  -h, --help        this help

Requests to any endpoint that is not loopback are signed with SigV4 (service execute-api)
using the AWS SDK's default credential chain (environment, profile, SSO, role).

Exit codes:
${EXIT_MEANINGS.map(([code, meaning]) => `  ${code}  ${meaning}`).join('\n')}
`;
