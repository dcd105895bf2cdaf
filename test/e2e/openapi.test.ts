import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { httpRoutes } from '#wiring';
import { api } from '../support/api';

const sha256 = (bytes: string | Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('GET /openapi.json', () => {
  it('serves a valid OpenAPI 3.1 document of every route the runtime routes, cacheable and relative to its origin', async () => {
    // Act
    const response = await api('/openapi.json');

    // Assess
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    expect((await new Validator().validate(response.body)).valid).toBe(true);
    expect(response.body.servers).toEqual([{ url: '/' }]);
    const operations = Object.values(response.body.paths as Record<string, Record<string, { operationId: string }>>).flatMap((methods) =>
      Object.values(methods).map((operation) => operation.operationId),
    );
    expect(operations.sort()).toEqual(httpRoutes.map((route) => route.id).sort());
  });

  it('answers a revalidation with its ETag with a bodiless 304', async () => {
    // Prepare
    const first = await api('/openapi.json');
    const etag = first.headers.get('etag') as string;

    // Act
    const again = await api('/openapi.json', { headers: { 'if-none-match': etag } });

    // Assess
    expect(etag).toMatch(/^"[\w-]+"$/);
    expect(again.status).toBe(304);
    expect(again.body).toBeUndefined();
  });
});

describe('GET /docs', () => {
  it('serves the reference page with the strict page policy: its own script and document only, no inline script', async () => {
    // Act
    const page = await api('/docs');

    // Assess
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const policy = page.headers.get('content-security-policy') ?? '';
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self';");
    expect(policy).not.toMatch(/unsafe-eval|https?:/);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.body).toContain('<script src="/docs/scalar.js"></script>');
    expect(page.body).toContain('data-url="/openapi.json"');
    // The only script element without src is JSON data, which a browser never runs.
    const inline = [...(page.body as string).matchAll(/<script(?![^>]*\bsrc=)([^>]*)>/g)].map((match) => match[1]);
    for (const attributes of inline) expect(attributes).toContain('type="application/json"');
    expect(page.body).not.toMatch(/https?:\/\//);
  });

  it("serves Scalar's browser build from the installed package, not a CDN, with an ETag", async () => {
    // Prepare
    const installed = readFileSync(new URL('../../node_modules/@scalar/api-reference/dist/browser/standalone.js', import.meta.url));

    // Act
    const script = await api('/docs/scalar.js');
    const again = await api('/docs/scalar.js', { headers: { 'if-none-match': script.headers.get('etag') as string } });

    // Assess
    expect(script.status).toBe(200);
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(sha256(script.body as string)).toBe(sha256(installed));
    expect(again.status).toBe(304);
  });
});
