// CloudFront Function (runtime cloudfront-js-2.0), viewer request of the default behaviour.
//
// The viewer's address for the handlers' per-IP limits. Not `CloudFront-Viewer-Address`: CloudFront
// forwards that only under an origin request policy that also forwards `Host`, which an
// `execute-api` origin refuses. The handlers trust this header only when `x-origin-verify` matched.

// biome-ignore lint/correctness/noUnusedVariables: CloudFront calls the function named `handler`.
function handler(event) {
  const request = event.request;
  // Replaces whatever the client sent under that name.
  request.headers['x-chat-viewer-address'] = { value: event.viewer.ip };
  return request;
}
