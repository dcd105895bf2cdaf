#!/usr/bin/env node
/**
 * CDK app (cdk.json "app"). Settings come from context: `npx cdk synth -c stage=prod -c alarmEmail=ops@example.com`
 * (docs/operations.md, "First deploy" and "Configuration"); a context key the app does not read fails
 * the synth, naming it. cdk-nag's AwsSolutions checks run as a validation plugin on every synth.
 */
import { App } from 'aws-cdk-lib';
import { quietBundlingProgress } from '../lib/bundling-log.ts';
import { createChatApp } from '../lib/stacks/chat-app.ts';

quietBundlingProgress();
const app = new App();
createChatApp(app, { nagChecks: true });
app.synth();
