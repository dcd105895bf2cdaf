import { describe, expect, it } from 'vitest';
import { type Area, areas, functionsOf } from '#wiring';
import { futureAreas, projectedAreas, type SynthesizedStacks, stackLimits, synthesizeStacks } from '../support/area-projection.ts';

/**
 * The guard of docs ARCHITECTURE.md "Stacks": CloudFormation refuses a stack past 500 resources or
 * 1 MB of template, and a nested stack past 200 parameters or outputs. Every template of the cloud
 * assembly (the root's and each area's nested stack) must stay under 400 resources and 800 KB, today
 * and with 150 more routes spread over the areas still to come.
 *
 * Synthesized at collection time (bundling skipped), so that each stack is a test named with what
 * it measured.
 */

const projectedRoutes = 150;
const projection = projectedAreas(projectedRoutes);

const cases: Array<{ label: string; areas: readonly Area[]; synthesized: SynthesizedStacks }> = [
  { label: 'today', areas, synthesized: synthesizeStacks({ areas }) },
  {
    label: `+${projectedRoutes} routes`,
    areas: [...areas, ...projection],
    synthesized: synthesizeStacks({ areas: [...areas, ...projection] }),
  },
];

const kb = (bytes: number) => Math.round(bytes / 1024);

describe(`the projection of ${projectedRoutes} routes`, () => {
  it('spreads them over the areas still to come, about 19 each, with event subscribers and every kind of binding', () => {
    const routes = projection.flatMap((area) => area.httpRoutes ?? []);
    const bindings = new Set(projection.flatMap(functionsOf).flatMap((entry) => entry.bindings.map((binding) => binding.split(':')[0])));

    expect(routes).toHaveLength(projectedRoutes);
    expect(projection.map((area) => area.id)).toEqual(futureAreas.map((area) => area.id));
    expect(projection.map((area) => area.httpRoutes?.length)).toEqual([19, 19, 19, 19, 19, 19, 18, 18]);
    expect(projection.flatMap((area) => area.eventSubscribers ?? []).map((subscriber) => subscriber.id)).toEqual([
      'PushTopicSender',
      'ModerationAssistant',
      'NotificationFanout',
      'DigestBuilder',
      'NetworkRelay',
    ]);
    expect(bindings).toEqual(new Set(['table', 'queue', 'connections', 'secret', 'outbound']));
    // Unique ids and route keys, as the HTTP API and the function names demand.
    const all = [...areas, ...projection];
    expect(new Set(all.flatMap(functionsOf).map((entry) => entry.id)).size).toBe(all.flatMap(functionsOf).length);
    const keys = all.flatMap((area) => area.httpRoutes ?? []).map((route) => `${route.method} ${route.path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

describe.each(cases)('stacks $label', ({ label, areas: built, synthesized }) => {
  const { stacks } = synthesized;
  const root = stacks[0];
  const largest = [...stacks].sort((a, b) => b.resources - a.resources)[0];

  it(`are checked, every one: ${stacks.map((stack) => stack.name).join(', ')}`, () => {
    const nestedStacks = Object.values(root?.template.Resources ?? {}).filter((resource) => resource.Type === 'AWS::CloudFormation::Stack');

    expect(root?.name).toBe('Chat-dev');
    // ConsoleSite: the edge's deploy-time copy of the console build (lib/constructs/chat-console-site.ts).
    expect(stacks.map((stack) => stack.name).sort()).toEqual(['Chat-dev', 'ConsoleSite', ...built.map((area) => area.id)].sort());
    expect(stacks.filter((stack) => stack.templateFile.endsWith('.nested.template.json'))).toHaveLength(built.length + 1);
    expect(nestedStacks).toHaveLength(built.length + 1);
  });

  it.each(stacks.map((stack) => ({ ...stack, kb: kb(stack.templateBytes) })))(
    '$name: $resources resources, $kb KB, $parameters parameters, $outputs outputs, under the limits',
    (stack) => {
      expect(stack.resources, `${stack.name} resources`).toBeLessThanOrEqual(stackLimits.resources);
      expect(stack.templateBytes, `${stack.name} template bytes`).toBeLessThanOrEqual(stackLimits.templateBytes);
      expect(stack.parameters, `${stack.name} parameters`).toBeLessThanOrEqual(stackLimits.parameters);
      expect(stack.outputs, `${stack.name} outputs`).toBeLessThanOrEqual(stackLimits.outputs);
    },
  );

  it(`largest: ${largest?.name} with ${largest?.resources} of ${stackLimits.resources} resources`, () => {
    const heaviest = [...stacks].sort((a, b) => b.templateBytes - a.templateBytes)[0];

    expect(largest?.resources, `${label}: the largest stack is ${largest?.name} with ${largest?.resources} resources`).toBeLessThanOrEqual(
      stackLimits.resources,
    );
    expect(
      heaviest?.templateBytes,
      `${label}: the largest template is ${heaviest?.name} with ${kb(heaviest?.templateBytes ?? 0)} KB`,
    ).toBeLessThanOrEqual(stackLimits.templateBytes);
  });

  it('let areas reference only the root: no nested stack takes a parameter from another one, or waits for it', () => {
    const resources = root?.template.Resources ?? {};
    const nested = Object.entries(resources).filter(([, resource]) => resource.Type === 'AWS::CloudFormation::Stack');
    const crossings: string[] = [];
    for (const [stackId, resource] of nested) {
      const parameters = (resource.Properties?.Parameters ?? {}) as Record<string, unknown>;
      for (const [name, value] of Object.entries(parameters)) {
        for (const source of referencedIds(value)) {
          if (resources[source]?.Type === 'AWS::CloudFormation::Stack') crossings.push(`${stackId}.${name} ← ${source}`);
          else expect(resources[source], `${stackId}.${name} ← ${source}`).toBeDefined();
        }
      }
      for (const dependency of [resource.DependsOn ?? []].flat()) {
        if (resources[dependency]?.Type === 'AWS::CloudFormation::Stack') crossings.push(`${stackId} waits for ${dependency}`);
      }
    }

    expect(nested).toHaveLength(built.length + 1);
    expect(crossings).toEqual([]);
  });
});

/** The logical ids a value refers to (`Ref` and `Fn::GetAtt`), pseudo parameters excluded. */
function referencedIds(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(referencedIds);
  if (value && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if (typeof record.Ref === 'string') return record.Ref.startsWith('AWS::') ? [] : [record.Ref];
    const getAtt = record['Fn::GetAtt'];
    if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') return [getAtt[0]];
    return Object.values(record).flatMap(referencedIds);
  }
  return [];
}
