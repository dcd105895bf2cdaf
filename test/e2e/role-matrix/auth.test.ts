import { describeRoleMatrix, roleMatrixBeforeAll } from '../../support/matrices/role-driver';

/**
 * The Auth area's routes take the operator key, the API key or no credentials, never a role: the file
 * holds no case, and its completeness check fails once a route of the area takes one.
 */

const roles = roleMatrixBeforeAll('roles-auth');

describeRoleMatrix('Auth', roles, {});
