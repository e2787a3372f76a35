import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../lib/api/routes.ts';
import { resourceMatches } from './iam.ts';
import { logicalId, ref, render, resourceById, synthesize } from './template.ts';

// Prepare
const { stack, template } = synthesize();
const policyId = logicalId(stack, stack.tenantAccess.policy);
const apiId = logicalId(stack, stack.api);
const stageId = logicalId(stack, stack.api.deploymentStage);

interface Statement {
  Sid: string;
  Effect: string;
  Action: string;
  Resource: unknown;
  Condition?: unknown;
}
const statements = () =>
  (resourceById(template, policyId).Properties as { PolicyDocument: { Statement: Statement[] } })
    .PolicyDocument.Statement;
/** The policy variable IAM replaces with the caller's tag. */
const TAG = `\${aws:PrincipalTag/lethe-tenant}`;

/** The ARN of a request, as execute-api:Invoke is evaluated. */
const requestArn = (method: string, path: string, stage = 'prod') =>
  `arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/${stage}/${method}${path}`;

/**
 * What IAM decides for a principal tagged `lethe-tenant=<tag>`: the policy variable replaced by
 * the tag, the template's references by the deployed values.
 */
function allowed(tag: string, arn: string) {
  return statements().some((statement) => {
    const pattern = render(statement.Resource)
      .replaceAll(TAG, tag)
      .replace('<AWS::Partition>', 'aws')
      .replace('<AWS::Region>', 'eu-west-1')
      .replace('<AWS::AccountId>', '123456789012')
      .replace(`<${apiId}>`, 'a1b2c3d4e5')
      .replace(`<${stageId}>`, 'prod');
    return (
      statement.Effect === 'Allow' &&
      statement.Action === 'execute-api:Invoke' &&
      resourceMatches(pattern, arn)
    );
  });
}

const pathOf = (resource: string, tenant: string) =>
  resource
    .replace('{tenant}', tenant)
    .replace('{stream}', 'logs')
    .replace('{deletionId}', '3f1c2a4e-8b7d-4c6e-9a1b-2d3e4f5a6b7c');

describe('TenantInvokePolicy', () => {
  it('allows execute-api:Invoke under the tagged tenant, in the stage of this API', () => {
    // Act
    const [own] = statements().filter((statement) => statement.Sid === 'OwnTenant');

    // Assess
    expect(own?.Action).toBe('execute-api:Invoke');
    expect(render(own?.Resource)).toBe(
      `arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${apiId}>/<${stageId}>/*/v1/tenants/${TAG}/*`,
    );
  });

  it('applies only to principals that carry the tag', () => {
    // Act
    const [own] = statements().filter((statement) => statement.Sid === 'OwnTenant');

    // Assess
    expect(own?.Condition).toEqual({ Null: { 'aws:PrincipalTag/lethe-tenant': 'false' } });
  });

  it('allows nothing else', () => {
    // Assess
    expect(statements().map((statement) => [statement.Sid, statement.Effect])).toEqual([
      ['OwnTenant', 'Allow'],
      ['OwnTenantOffboarding', 'Allow'],
      ['Health', 'Allow'],
      ['CertificateKey', 'Allow'],
    ]);
  });

  it.each(
    ROUTES.flatMap((route) =>
      ['acme', 'globex'].map((tenant) => ({
        route: `${route.method} ${route.resource}`,
        method: route.method,
        path: pathOf(route.resource, tenant),
        tenant,
        // The health check and the certificate key hold no tenant's data; every other route
        // is the tenant's own.
        expected:
          route.operation === 'health' ||
          route.operation === 'getCertificateKey' ||
          tenant === 'acme',
      })),
    ),
  )(
    'lets a principal tagged acme call $route as $tenant: $expected',
    ({ method, path, expected }) => {
      // Assess
      expect(allowed('acme', requestArn(method, path))).toBe(expected);
    },
  );

  it.each([
    { case: "a tenant whose name starts with the principal's", path: '/v1/tenants/acme2/streams' },
    { case: 'another method on the health path', path: '/v1/health', method: 'POST' },
    { case: 'another stage', path: '/v1/tenants/acme/streams', stage: 'test' },
  ])('refuses $case', ({ path, method = 'GET', stage }) => {
    // Assess
    expect(allowed('acme', requestArn(method, path, stage))).toBe(false);
  });

  it('is attached to no principal of the stack: it is for the tenants', () => {
    // Act
    const properties = resourceById(template, policyId).Properties ?? {};

    // Assess
    expect([properties.Roles, properties.Users, properties.Groups]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('is an output', () => {
    // Assess
    template.hasOutput('TenantInvokePolicyArn', { Value: ref(policyId) });
  });
});

describe('tenantInvokeStatements (one role per tenant)', () => {
  it('names the tenant in the resource', () => {
    // Act
    const resources = stack
      .tenantInvokeStatements('acme')
      .flatMap((statement) => statement.toStatementJson().Resource as unknown);

    // Assess
    expect(resources.map((resource) => render(stack.resolve(resource)))).toEqual([
      `arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${apiId}>/<${stageId}>/*/v1/tenants/acme/*`,
      `arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${apiId}>/<${stageId}>/DELETE/v1/tenants/acme`,
      `arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${apiId}>/<${stageId}>/GET/v1/health`,
      `arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<${apiId}>/<${stageId}>/GET/v1/certificate-key`,
    ]);
  });

  it.each(['*', 'Acme', 'acme/*', '', 'a?'])(
    'refuses %j, which would widen the pattern',
    (tenant) => {
      // Assess
      expect(() => stack.tenantInvokeStatements(tenant)).toThrow(/tenant must match/);
    },
  );
});
