import { Stack, Validations } from 'aws-cdk-lib';
import type { Grant } from 'aws-cdk-lib/aws-iam';
// cdk-nag's own flattening, so an acknowledgment names a finding exactly as the AwsSolutions-IAM5 rule reports it.
import { flattenCfnReference } from 'cdk-nag/lib/utils/flatten-cfn-reference.js';
import type { IConstruct } from 'constructs';

/**
 * Acknowledges `AwsSolutions-IAM5` for each wildcard resource a grant added, with the reason given.
 * Only the wildcards of this grant are acknowledged (for example `<Table.Arn>/index/*`), never the
 * rule as a whole, so a new wildcard elsewhere still fails cdk-nag.
 *
 * The granted resources must live in the same stack as `scope`: their ARNs are resolved in that
 * stack's template, which is what cdk-nag reads.
 *
 * @returns the acknowledged finding ids
 */
export function acknowledgeWildcardResources(scope: IConstruct, grant: Grant, reason: string): string[] {
  const stack = Stack.of(scope);
  const findings = new Set<string>();
  for (const statement of grant.principalStatements) {
    for (const resource of statement.resources) {
      const flat = flattenCfnReference(stack.resolve(resource));
      if (flat.includes('*')) findings.add(`AwsSolutions-IAM5[Resource::${flat}]`);
    }
  }
  for (const id of findings) Validations.of(scope).acknowledge({ id, reason });
  return [...findings];
}
