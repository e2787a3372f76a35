import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { ManagedPolicy, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { NAME_PATTERN } from '../lib/core/names.ts';

/** The principal tag naming the one tenant a caller may act for. */
export const TENANT_TAG = 'lethe-tenant';

const OWN_TENANT = `\${aws:PrincipalTag/${TENANT_TAG}}`;

/** The health check: no tenant's data, so any caller of the API may use it. */
const healthStatement = (api: RestApi) =>
  new PolicyStatement({
    sid: 'Health',
    actions: ['execute-api:Invoke'],
    resources: [api.arnForExecuteApi('GET', '/v1/health', api.deploymentStage.stageName)],
  });

/** The public key that verifies certificates: no tenant's data either. */
const certificateKeyStatement = (api: RestApi) =>
  new PolicyStatement({
    sid: 'CertificateKey',
    actions: ['execute-api:Invoke'],
    resources: [api.arnForExecuteApi('GET', '/v1/certificate-key', api.deploymentStage.stageName)],
  });

/**
 * Every method under `/v1/tenants/<tenant>/`, in the API's stage. The `/` after the name keeps
 * `acme` from reaching `acme2`'s paths.
 */
const tenantPaths = (api: RestApi, tenant: string) =>
  api.arnForExecuteApi('*', `/v1/tenants/${tenant}/*`, api.deploymentStage.stageName);

/** The tenant itself (offboarding it): `DELETE /v1/tenants/<tenant>`, nothing below. */
const tenantItself = (api: RestApi, tenant: string) =>
  api.arnForExecuteApi('DELETE', `/v1/tenants/${tenant}`, api.deploymentStage.stageName);

/**
 * For one role per tenant: statements that let a principal call only this tenant's routes (and
 * the health check), e.g. `role.addToPolicy(...)` for each.
 */
export function tenantInvokeStatements(api: RestApi, tenant: string): PolicyStatement[] {
  if (!NAME_PATTERN.test(tenant)) {
    throw new Error(`tenant must match ${NAME_PATTERN.source} (got ${JSON.stringify(tenant)})`);
  }
  return [
    new PolicyStatement({
      sid: 'OwnTenant',
      actions: ['execute-api:Invoke'],
      resources: [tenantPaths(api, tenant)],
    }),
    new PolicyStatement({
      sid: 'OwnTenantOffboarding',
      actions: ['execute-api:Invoke'],
      resources: [tenantItself(api, tenant)],
    }),
    healthStatement(api),
    certificateKeyStatement(api),
  ];
}

/**
 * One managed policy for every tenant: attached to a role or user tagged
 * `lethe-tenant=<tenant>`, it lets that principal call only its own tenant's routes.
 */
export class TenantAccess extends Construct {
  public readonly policy: ManagedPolicy;

  constructor(scope: Construct, id: string, props: { readonly api: RestApi }) {
    super(scope, id);
    this.policy = new ManagedPolicy(this, 'InvokePolicy', {
      description: `Lethe: invoke only the API routes of the tenant named by the principal tag ${TENANT_TAG}`,
      statements: [
        new PolicyStatement({
          sid: 'OwnTenant',
          actions: ['execute-api:Invoke'],
          resources: [tenantPaths(props.api, OWN_TENANT)],
          // Explicit, though an unresolved policy variable already matches nothing.
          conditions: { Null: { [`aws:PrincipalTag/${TENANT_TAG}`]: 'false' } },
        }),
        new PolicyStatement({
          sid: 'OwnTenantOffboarding',
          actions: ['execute-api:Invoke'],
          resources: [tenantItself(props.api, OWN_TENANT)],
          conditions: { Null: { [`aws:PrincipalTag/${TENANT_TAG}`]: 'false' } },
        }),
        healthStatement(props.api),
        certificateKeyStatement(props.api),
      ],
    });
  }
}
