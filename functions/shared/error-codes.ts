/**
 * Every error code the service can answer, with its HTTP status and what it means to the caller.
 * `HttpError` and the error bodies written by hand (WebSocket frames, the local gateway) take an
 * `ErrorCode`, so a code that is not listed here does not compile, and each error class takes only
 * the codes of its own status. docs/api.md's errors table is generated from this list
 * (`npm run docs:errors`) and a test fails when the two differ.
 *
 * `only` marks a code that one path alone answers: `websocket` (an `error` frame on a socket, no
 * HTTP status of its own; the status is the HTTP one of the same fault) or `local` (the local
 * runtime's gateway, where API Gateway answers on AWS).
 */

interface ErrorCodeEntry {
  readonly status: number;
  readonly meaning: string;
  readonly only?: 'websocket' | 'local';
}

export const ERROR_CODES = {
  validation_failed: {
    status: 400,
    meaning: 'The request (or frame) breaks its schema; `details` name each bad field, e.g. `body.attachments.1`',
  },
  invalid_json: { status: 400, meaning: 'The body (or frame) is not JSON' },
  unsupported_protocol: {
    status: 400,
    meaning: 'A Pusher-protocol socket (`/app/<key>`) asked for a protocol version other than 5-7; the upgrade is refused',
  },
  room_mismatch: { status: 400, meaning: "A WebSocket `message` frame names another room than the socket's", only: 'websocket' },
  unsupported_frame: {
    status: 400,
    meaning: "A frame type the socket's channel does not take; the message lists those it does",
    only: 'websocket',
  },
  reserved_id: { status: 400, meaning: 'A client-chosen id in a prefix the service keeps (see [Reserved ids](#reserved-ids))' },
  unknown_event_type: { status: 400, meaning: 'A webhook registration names event types the catalogue does not have; nothing is stored' },
  too_many_webhooks: { status: 400, meaning: 'The project has its 50 webhook registrations already' },
  too_many_bridges: { status: 400, meaning: 'The project has its 50 bridges already' },
  bridge_settings_invalid: {
    status: 400,
    meaning:
      "A bridge's settings do not fit its platform (a field of another platform, a Discord webhook URL that is not one, neither webhook nor bot)",
  },
  invalid_socket_id: {
    status: 400,
    meaning: 'A `socket_id` that is not a Pusher socket id (`<digits>.<digits>`): `/auth/channel` and the Pusher trigger API',
  },
  invalid_channel_name: {
    status: 400,
    meaning:
      'A Pusher channel that names no room: channels are `private-room-<roomId>`, `presence-room-<roomId>` and their `-cache-` forms',
  },
  invalid_event_data: { status: 400, meaning: 'A Pusher trigger event whose `data` is not a JSON object in a string' },
  webhook_url_not_https: { status: 400, meaning: 'A webhook URL that is not https (plain http only to loopback in local mode)' },
  webhook_url_private: { status: 400, meaning: 'A webhook URL naming a private, loopback, link-local or internal host' },
  push_endpoint_not_https: { status: 400, meaning: 'A web push endpoint that is not https' },
  push_endpoint_private: { status: 400, meaning: 'A web push endpoint naming a private, loopback, link-local or internal host' },
  unknown_disposition: { status: 400, meaning: 'A handoff completion with a code the project does not have; `details.allowed` lists them' },
  thread_too_short: { status: 400, meaning: 'A thread summary asked of a thread with too few messages' },
  unknown_assignee: {
    status: 400,
    meaning:
      'A ticket assignee who is not a member of the project (a member of none of its rooms); only the caller may assign themself regardless',
  },
  model_not_allowed: { status: 400, meaning: 'An agent model outside `AI_ALLOWED_MODELS`; `details.allowedModels` lists them' },
  project_required: {
    status: 400,
    meaning: 'The VAPID public key route names no project: send a user token, `?projectId=` or `X-Service-Project-Id`',
  },
  empty_upload: { status: 400, meaning: 'An upload (`POST /upload`, `POST /messages/voice`) without any bytes' },
  invalid_multipart: {
    status: 400,
    meaning: 'A `multipart/form-data` upload that does not parse, or holds no file part or more than one',
  },
  voice_duration_unknown: {
    status: 400,
    meaning: 'A voice message whose duration cannot be read from the audio and was not given (`durationMs`)',
  },
  invalid_path: { status: 400, meaning: 'A path with a malformed percent-encoding', only: 'local' },
  bad_request: { status: 400, meaning: 'A request that is not valid HTTP', only: 'local' },
  missing_credentials: {
    status: 401,
    meaning: 'No token, API key or operator key where the route needs one; the message names what it takes',
  },
  invalid_token: { status: 401, meaning: 'A token that is not a valid JWT of a known project (signature, algorithm, claims, user id)' },
  token_expired: { status: 401, meaning: 'A token past its `exp`' },
  invalid_api_key: { status: 401, meaning: 'An `X-Service-Api-Key` that no project has, or whose project is gone' },
  invalid_credentials: { status: 401, meaning: 'Sign-in with an unknown user or a wrong password (the two are not told apart)' },
  invalid_bridge_signature: {
    status: 401,
    meaning:
      "A bridge webhook whose platform signature (Slack's HMAC, Discord's Ed25519) or Matrix `hs_token` is missing or wrong, or whose signed timestamp is outside the 5-minute window: nothing is written",
  },
  invalid_pusher_signature: {
    status: 401,
    meaning:
      'A Pusher trigger API request whose `auth_key`, `auth_timestamp` (10 minutes either way), `auth_version`, `body_md5` or `auth_signature` is missing or wrong: nothing is published',
  },
  invalid_service_signature: {
    status: 401,
    meaning:
      'A marketplace audit result whose `X-Service-Signature` (`t=<unix seconds>,v1=<hex HMAC-SHA256>`) is missing, malformed or wrong, or whose `t` is outside the 5-minute window: nothing is stored',
  },
  quota_exceeded: { status: 402, meaning: "The project's monthly AI quota is used up; it renews on the first of the month (UTC)" },
  forbidden: { status: 403, meaning: "The caller's role is too low for the action" },
  not_a_member: { status: 403, meaning: 'The caller is not a member of the room (private rooms, sockets, room keys)' },
  not_message_author: { status: 403, meaning: 'Only the author may edit a message (and delete it, besides the room owner and moderators)' },
  guest_forbidden: { status: 403, meaning: 'A room guest asks for what guests may not have (the e2e room key)' },
  backdating_forbidden: { status: 403, meaning: "Only an admin token or the API key may set a message's `userId` or `createdAt`" },
  feature_disabled: { status: 403, meaning: "The route's feature flag is off for the project" },
  origin_not_allowed: {
    status: 403,
    meaning:
      "A guest session asked from a site (`Origin`) not in the project's widget `allowedOrigins`, or a guest token presented from another origin than the one it was issued for",
  },
  invalid_unsubscribe_link: {
    status: 403,
    meaning:
      "A digest unsubscribe link the service did not sign (forged, altered, or signed before the project's signing secret was rotated): nothing changed",
  },
  direct_access_forbidden: {
    status: 403,
    meaning:
      'A request to the HTTP or WebSocket API that went around the CloudFront distribution (its origin header missing or wrong); use the base URL',
  },
  project_mismatch: { status: 403, meaning: "`X-Service-Project-Id` names another project than the token's" },
  subject_forbidden: {
    status: 403,
    meaning: 'A token whose `sub` names another user than its `userId`, on a GDPR route, without the admin or owner role',
  },
  export_link_invalid: { status: 403, meaning: 'A GDPR export download link that is malformed, altered or past its expiry' },
  not_found: { status: 404, meaning: 'No such route (or `/platform` without an operator key configured)' },
  room_not_found: { status: 404, meaning: "No such room in the caller's project (another project's rooms answer the same)" },
  message_not_found: { status: 404, meaning: 'No such message in the room' },
  report_not_found: { status: 404, meaning: 'No such moderation report in the project' },
  project_not_found: { status: 404, meaning: 'No such project' },
  export_not_found: { status: 404, meaning: 'A GDPR export download link whose staged export is gone (expired, or the subject erased)' },
  agent_not_found: { status: 404, meaning: 'No such agent in the project' },
  webhook_not_found: { status: 404, meaning: 'No such webhook registration in the project' },
  bridge_not_found: { status: 404, meaning: "No such bridge (in the caller's project; on a platform webhook, anywhere)" },
  pusher_app_not_found: {
    status: 404,
    meaning:
      'The project has no Pusher app (`GET /admin/pusher-app`), no app has this id (the trigger API), or none has the key a Pusher socket (`/app/<key>`) names',
  },
  delivery_not_found: { status: 404, meaning: 'No such webhook delivery in the project' },
  device_not_found: { status: 404, meaning: 'No such push device of the caller' },
  subscription_not_found: { status: 404, meaning: 'No such web push subscription of the caller' },
  push_not_found: { status: 404, meaning: 'No such push to acknowledge' },
  attachment_not_found: { status: 404, meaning: 'No such attachment (a link that was never made, or an erased upload)' },
  notification_not_found: { status: 404, meaning: "No such notification in the caller's inbox (another user's, or expired)" },
  support_room_not_set: {
    status: 404,
    meaning: 'A guest session asked for the support room of a project that has none (`PUT /admin/widget`)',
  },
  canned_response_not_found: { status: 404, meaning: 'No such canned response in the project' },
  ticket_not_found: { status: 404, meaning: 'No such support ticket in the project' },
  survey_not_found: { status: 404, meaning: 'No such satisfaction survey of the caller' },
  method_not_allowed: { status: 405, meaning: 'The path exists, but not with this method' },
  room_exists: { status: 409, meaning: 'A room with this id exists already' },
  dm_id_taken: { status: 409, meaning: "The pair's dm id holds something other than their dm" },
  dm_membership_fixed: {
    status: 409,
    meaning: 'A dm keeps exactly its two members (no adds or removals; an agent answers only in a dm it is in)',
  },
  project_exists: { status: 409, meaning: 'A project with this id exists already' },
  membership_changed: { status: 409, meaning: 'The membership kept changing during the request; try again' },
  target_busy: { status: 409, meaning: 'A push token or endpoint kept changing hands during the request; try again' },
  message_deleted: { status: 409, meaning: 'The message was deleted: it can no longer be edited, reacted to, pinned or reported' },
  message_changed: { status: 409, meaning: 'The message kept changing during the edit; try again' },
  already_reported: { status: 409, meaning: 'The caller reported this message already (one report per user and message)' },
  report_closed: { status: 409, meaning: 'The report was resolved or dismissed already; a closed report does not change again' },
  watchlist_full: { status: 409, meaning: 'The watchlist holds its maximum number of targets' },
  delivery_not_failed: { status: 409, meaning: 'Only a failed webhook delivery can be replayed' },
  agent_handle_taken: { status: 409, meaning: 'Another agent of the project has this handle' },
  pusher_app_not_configured: {
    status: 409,
    meaning: 'The project has no Pusher app yet: an admin creates one with `POST /admin/pusher-app`',
  },
  pusher_app_changed: { status: 409, meaning: 'The Pusher app kept changing during its creation or rotation; try again' },
  e2e_room: { status: 409, meaning: 'AI cannot read an end-to-end encrypted room' },
  human_handoff_active: { status: 409, meaning: 'A human has taken the room over; AI answers resume when the handoff is completed' },
  handoff_active: { status: 409, meaning: 'The room has an active handoff; complete it first' },
  no_active_handoff: { status: 409, meaning: 'The room has no active handoff to complete' },
  shortcut_taken: { status: 409, meaning: 'Another canned response of the project has this shortcut' },
  canned_responses_full: { status: 409, meaning: 'The project has its 100 canned responses already' },
  canned_responses_changed: { status: 409, meaning: 'The canned responses kept changing during the request; try again' },
  ticket_transition_not_allowed: {
    status: 409,
    meaning: "The ticket's status cannot move to the one asked from where it is (docs/api.md, support ticket states); `details` name both",
  },
  room_has_active_ticket: { status: 409, meaning: 'A ticket cannot be reopened while its room has another open or pending ticket' },
  ticket_changed: { status: 409, meaning: 'The ticket changed during the request; read it again and retry' },
  survey_answered: { status: 409, meaning: 'The satisfaction survey was answered already (once only)' },
  payload_too_large: { status: 413, meaning: 'A body over 1 MiB (a client event frame over its own limit)' },
  upload_too_large: { status: 413, meaning: 'A file over `ATTACHMENTS_MAX_BYTES` (4 MiB by default); the message names the limit' },
  unsupported_media_type: {
    status: 415,
    meaning: 'An upload whose declared `Content-Type` is not in `ATTACHMENTS_ALLOWED_TYPES` (the message lists them), or audio expected',
  },
  content_type_mismatch: {
    status: 415,
    meaning: "An upload whose bytes are not what its `Content-Type` declares (sniffed from the file's signature; text must be UTF-8)",
  },
  headers_too_large: { status: 431, meaning: 'A request line and headers over 16 KB', only: 'local' },
  rate_limited: {
    status: 429,
    meaning: 'Over a rate limit; `Retry-After` (seconds) and `details.retryAfterSeconds` say when to try again',
  },
  sign_in_locked: { status: 429, meaning: 'Too many failed sign-ins of that user; `Retry-After` says when to try again' },
  too_many_streams: { status: 429, meaning: 'The user or project has every SSE stream it may have open; `Retry-After` as above' },
  internal_error: { status: 500, meaning: 'An unexpected failure; the message carries the trace id, details are only logged' },
  audit_unavailable: {
    status: 500,
    meaning:
      'A privileged action whose audit event could not be written (after retries): the action may have taken effect; read it back before trying again',
  },
  ai_provider_error: { status: 502, meaning: 'The AI provider failed (unreachable, or an error status)' },
  ai_timeout: { status: 502, meaning: 'The AI provider did not answer in time' },
  ai_bad_response: { status: 502, meaning: "The AI provider's answer was unusable (no text, too large, not JSON)" },
  bad_gateway: { status: 502, meaning: 'A handler failed before it could answer', only: 'local' },
  marketplace_not_configured: {
    status: 503,
    meaning:
      'The marketplace audit callback is not set up on this service (the `marketplace-signing` secret, `MARKETPLACE_AUDIT_SECRET`, unset)',
  },
  ai_not_configured: { status: 503, meaning: 'AI is not configured on this service (`AI_BASE_URL` unset)' },
  attachments_not_configured: {
    status: 503,
    meaning: 'No attachments bucket is bound (deployed with `attachmentsEnabled=false`, or locally `ATTACHMENTS_ENABLED=false`)',
  },
} as const satisfies Record<string, ErrorCodeEntry>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes answered with HTTP status `S`. */
export type ErrorCodeOf<S extends number> = {
  [C in ErrorCode]: (typeof ERROR_CODES)[C]['status'] extends S ? C : never;
}[ErrorCode];

/** The `error` member of every error answer and frame. */
export interface ErrorBody {
  readonly code: ErrorCode;
  readonly message: string;
  readonly details?: unknown;
  /** The request's trace id (`X-Trace-Id`), on every error the service answers, to quote when asking about it. */
  readonly traceId?: string;
}
