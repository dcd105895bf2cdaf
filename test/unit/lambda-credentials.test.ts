import { afterEach, describe, expect, it } from 'vitest';
import { defaultProvider } from '../../functions/shared/lambda-credentials';

/** The credential provider the Lambda bundles carry instead of the SDK's default chain. */
describe('the Lambda bundles’ credential provider', () => {
  const saved = { ...process.env };
  afterEach(() => {
    process.env = { ...saved };
  });

  it('reads the role credentials Lambda puts in the environment', async () => {
    // Prepare
    process.env.AWS_ACCESS_KEY_ID = 'ASIAEXAMPLE';
    process.env.AWS_SECRET_ACCESS_KEY = 'secret';
    process.env.AWS_SESSION_TOKEN = 'session';

    // Act
    const credentials = await defaultProvider()();

    // Assess
    expect(credentials).toMatchObject({ accessKeyId: 'ASIAEXAMPLE', secretAccessKey: 'secret', sessionToken: 'session' });
  });

  it('fails with a clear error when the environment has none', async () => {
    // Prepare
    delete process.env.AWS_ACCESS_KEY_ID;
    delete process.env.AWS_SECRET_ACCESS_KEY;

    // Act
    const resolved = defaultProvider()();

    // Assess
    await expect(resolved).rejects.toThrow(/environment/i);
  });
});
