import type { Template } from 'aws-cdk-lib/assertions';
import {
  type FunctionName,
  functionId,
  ref,
  resourceById,
  resourcesOfType,
  targetOf,
} from './template.ts';

export interface Statement {
  readonly Effect: 'Allow' | 'Deny';
  readonly Action?: string | string[];
  readonly NotAction?: string | string[];
  readonly Resource?: unknown;
}

interface PolicyDocument {
  readonly Statement: Statement[];
}

/** Logical id of the role a function runs as. */
export function roleId(template: Template, name: FunctionName): string {
  return targetOf(resourceById(template, functionId(template, name)).Properties?.Role);
}

/**
 * Every Allow statement that reaches a function's role: its inline policies and each
 * AWS::IAM::Policy or AWS::IAM::ManagedPolicy that lists the role.
 */
export function allowStatements(template: Template, name: FunctionName): Statement[] {
  const role = roleId(template, name);
  const inline = (resourceById(template, role).Properties?.Policies ?? []) as {
    PolicyDocument: PolicyDocument;
  }[];
  const attached = ['AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy']
    .flatMap((type) => resourcesOfType(template, type))
    .filter(([, policy]) =>
      ((policy.Properties?.Roles ?? []) as unknown[]).some(
        (roleRef) => JSON.stringify(roleRef) === JSON.stringify(ref(role)),
      ),
    )
    .map(([, policy]) => ({ PolicyDocument: policy.Properties?.PolicyDocument as PolicyDocument }));
  const statements = [...inline, ...attached]
    .flatMap(({ PolicyDocument }) => PolicyDocument.Statement)
    .filter((statement) => statement.Effect === 'Allow');
  if (statements.some((statement) => statement.NotAction !== undefined)) {
    // Allow + NotAction grants nearly everything; these helpers refuse to reason about it.
    throw new Error(`the ${name} function has an Allow statement with NotAction`);
  }
  return statements;
}

/** Every action pattern an Allow statement grants the function, wildcards as written. */
export function allowedActions(template: Template, name: FunctionName): string[] {
  return allowStatements(template, name).flatMap((statement) => statement.Action ?? []);
}

/**
 * Whether an IAM action pattern (`*` any run, `?` one character, case-insensitive) matches
 * `action`; an `action` ending in `*` is a family, matched if the pattern grants any member.
 */
export function grants(pattern: string, action: string): boolean {
  const family = action.endsWith('*');
  const wanted = (family ? action.slice(0, -1) : action).toLowerCase();
  const granted = pattern.toLowerCase();
  const match = (p: number, a: number): boolean => {
    if (a === wanted.length) {
      // A family's member may go on with anything; an exact action must end here.
      return (
        family ||
        granted
          .slice(p)
          .split('')
          .every((char) => char === '*')
      );
    }
    if (p === granted.length) return false;
    const char = granted[p];
    if (char === '*') return match(p + 1, a) || match(p, a + 1);
    return (char === '?' || char === wanted[a]) && match(p + 1, a + 1);
  };
  return match(0, 0);
}

/** Whether any of the patterns grants the action (or a member of the family `prefix*`). */
export function allows(patterns: readonly string[], action: string): boolean {
  return patterns.some((pattern) => grants(pattern, action));
}

/** Whether an IAM resource pattern matches an ARN: `*` any run, `?` one character, case kept. */
export function resourceMatches(pattern: string, arn: string): boolean {
  const escaped = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped.replace(/\*/g, '.*').replace(/\?/g, '.')}$`).test(arn);
}
