import { describeRoleMatrix, roleMatrixBeforeAll } from '../../support/matrices/role-driver';

/**
 * The Widget area's routes: `GET /embed.js` takes no credentials and no role (the guest-session and
 * widget-settings routes add their cases here); the completeness check fails once a route of the
 * area names a role without a case.
 */

const roles = roleMatrixBeforeAll('roles-widget');

describeRoleMatrix('Widget', roles, {});
