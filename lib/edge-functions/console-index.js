// CloudFront Function (runtime cloudfront-js-2.0), viewer request of the `/console` and `/console/*`
// behaviours, whose origin is the console's S3 bucket.
//
// S3 has no index documents behind origin access control: `/console/` is the key
// `console/index.html`, as the local gateway serves it, and `/console` moves there as it does (301).

// biome-ignore lint/correctness/noUnusedVariables: CloudFront calls the function named `handler`.
function handler(event) {
  const request = event.request;
  if (request.uri === '/console' || request.uri === '/console/index.html') {
    return { statusCode: 301, statusDescription: 'Moved Permanently', headers: { location: { value: '/console/' } } };
  }
  if (request.uri === '/console/') request.uri = '/console/index.html';
  return request;
}
