#!/usr/bin/env node
/**
 * CDK app (cdk.json "app"). Settings come from context: `npx cdk synth -c stage=prod -c operatorKey=...`
 * (see docs/operations.md). cdk-nag's AwsSolutions checks run as a validation plugin on every synth.
 */
import { App } from 'aws-cdk-lib';
import { createChatApp } from '../lib/stacks/chat-app.ts';

const app = new App();
createChatApp(app, { nagChecks: true });
app.synth();
