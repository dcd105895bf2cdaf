import { hasRole, subjectOf, type UserPrincipal } from '#shared/auth';
import { ForbiddenError } from '#shared/errors';
import { SUBJECT_ACTING_ROLES } from '#wiring';

/**
 * The subject a GDPR request acts on: the token's `sub`. A token acts for another subject than its
 * own user only with the admin or owner role (an admin acting for a subject); a member's token acts
 * for its own user only, whatever its `sub` says. Checked on every use, not only when
 * `POST /auth/token` mints the token: a customer's backend signs tokens itself.
 */
export function gdprSubject(principal: UserPrincipal): string {
  const subject = subjectOf(principal);
  if (subject !== principal.userId && !SUBJECT_ACTING_ROLES.some((role) => hasRole(principal, role))) {
    throw new ForbiddenError(
      'Only a token with the admin or owner role may act for another subject than its own user',
      'subject_forbidden',
    );
  }
  return subject;
}

/** The audit record's `requestedBy`: the acting user, or `subject` when the subjects asked themselves (their id must not stay). */
export const requesterOf = (principal: UserPrincipal, subject: string) => (principal.userId === subject ? 'subject' : principal.userId);
