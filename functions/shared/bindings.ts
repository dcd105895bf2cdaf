import { type Binding, bindingVariable } from '#wiring/bindings';

/**
 * The resource a binding of this function names (a queue URL, a topic or state machine ARN, a
 * secret's ARN, a provider's base URL), read from the variable `functions/wiring/bindings.ts` assigns it. A
 * function without the binding fails loudly, naming the fix, instead of calling the wrong resource.
 */
export function bound(binding: Binding): string {
  const value = process.env[bindingVariable(binding)];
  if (!value) throw new Error(`${binding} is not bound to this function: add it to its entry's bindings in functions/wiring/`);
  return value;
}

/** Like {@link bound}, `undefined` when unset: for optional resources such as a provider that may not be configured. */
export const boundIfSet = (binding: Binding): string | undefined => process.env[bindingVariable(binding)] || undefined;
