import { type App, Tags, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { Area } from '#wiring';
import { type ChatConfig, chatContextOverrides, resolveChatConfig } from './chat-config.ts';
import { ChatStack } from './chat-stack.ts';

/** Options of {@link createChatApp}. */
export interface ChatAppOptions {
  /**
   * Settings that win over CDK context (tests use this instead of `-c key=value`).
   * @default - context values, then the defaults of `resolveChatConfig`
   */
  readonly config?: Partial<ChatConfig>;
  /**
   * Registers cdk-nag's AwsSolutions pack as a validation plugin: synthesis fails on any finding
   * that is not acknowledged with a reason.
   * @default true
   */
  readonly nagChecks?: boolean;
  /**
   * The areas to build (the infra tests project the app at a larger size with generated ones).
   * @default the areas of `functions/wiring/`
   */
  readonly areas?: readonly Area[];
}

/** What {@link createChatApp} built. */
export interface ChatAppResult {
  readonly config: ChatConfig;
  readonly stack: ChatStack;
}

/**
 * Composes the service into `app`: one root stack named `Chat-<stage>` with a nested stack per area.
 * Reads context only (no lookups, no credentials), so `cdk synth` runs offline.
 */
export function createChatApp(app: App, options: ChatAppOptions = {}): ChatAppResult {
  const config = resolveChatConfig({ ...chatContextOverrides(app.node), ...options.config });

  const stack = new ChatStack(app, `Chat-${config.stage}`, {
    config,
    areas: options.areas,
    description: `Serverless chat service, stage ${config.stage}`,
    env: config.account || config.region ? { account: config.account, region: config.region } : undefined,
  });
  Tags.of(stack).add('service', 'chat');
  Tags.of(stack).add('stage', config.stage);

  if (options.nagChecks ?? true) Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { config, stack };
}
