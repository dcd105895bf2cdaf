import { Stack, Validations } from 'aws-cdk-lib';
import type { Grant, PolicyStatement } from 'aws-cdk-lib/aws-iam';
// cdk-nag's own flattening, so an acknowledgment names a finding exactly as the AwsSolutions-IAM5 rule reports it.
import { flattenCfnReference } from 'cdk-nag/lib/utils/flatten-cfn-reference.js';
import type { IConstruct } from 'constructs';

/**
 * Acknowledges `AwsSolutions-IAM5` for each wildcard resource and action a grant added, with the
 * reason given. Only the wildcards of this grant are acknowledged (for example
 * `<WebSocketApi>/prod/POST/@connections/*` or `kms:GenerateDataKey*`), never the rule as a whole,
 * so a new wildcard elsewhere still fails cdk-nag.
 *
 * The finding ids are computed when the app is validated, after CDK has turned references to
 * another stack's resources into that stack's parameters: a function in an area's nested stack
 * sees the root's WebSocket API as `<referencetoChat...Ref>`, and cdk-nag reports it so.
 */
export function acknowledgeWildcardResources(scope: IConstruct, grant: Grant, reason: string): void {
  acknowledgeWildcardStatements(scope, grant.principalStatements, reason);
}

/** {@link acknowledgeWildcardResources} for statements made without an L2 grant. */
export function acknowledgeWildcardStatements(scope: IConstruct, statements: readonly PolicyStatement[], reason: string): void {
  scope.node.addValidation({
    validate: () => {
      const stack = Stack.of(scope);
      const findings = new Set<string>();
      for (const statement of statements) {
        for (const action of statement.actions) if (action.includes('*')) findings.add(`AwsSolutions-IAM5[Action::${action}]`);
        for (const resource of statement.resources) {
          const flat = flattenCfnReference(stack.resolve(resource));
          if (flat.includes('*')) findings.add(`AwsSolutions-IAM5[Resource::${flat}]`);
        }
      }
      for (const id of findings) Validations.of(scope).acknowledge({ id, reason });
      return [];
    },
  });
}
