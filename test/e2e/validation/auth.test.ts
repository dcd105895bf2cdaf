import { beforeAll } from 'vitest';
import { api, createTestProject, type TestProject, uniqueId } from '../../support/api';
import {
  describeValidationMatrix,
  drop,
  idVariants,
  long,
  operator,
  type RouteRequests,
  set,
  type Variant,
} from '../../support/matrices/validation-driver';

/** Bad input to the Auth area's routes (projects, tokens, sign-in); the checks are the matrix's (`validation-driver.ts`). */

let project: TestProject;
/** A second project whose keys the RotateProjectKeys control may rotate. */
let rotatable: TestProject;
const signInUser = uniqueId('signin');
const SIGN_IN_PASSWORD = 'sign-in-password';

beforeAll(async () => {
  [project, rotatable] = await Promise.all([createTestProject('validation-auth'), createTestProject('rotatable')]);
  await api(`/users/${signInUser}/credentials`, { method: 'PUT', apiKey: project.apiKey, body: { password: SIGN_IN_PASSWORD } });
});

/** How to make a request each route of the area accepts. */
const requests: RouteRequests = {
  CreateProject: {
    path: () => '/platform/projects',
    auth: operator,
    body: () => ({ name: 'valid project', projectId: uniqueId('prj') }),
    success: 201,
  },
  RotateProjectKeys: {
    path: () => `/platform/projects/${rotatable.projectId}/rotate-keys`,
    auth: operator,
    body: () => ({ apiKey: false, signingSecret: false }),
    success: 200,
    optionalBody: true,
  },
  CreateToken: {
    path: () => '/auth/token',
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ userId: 'valid-user', roles: ['member'], expiresIn: 60 }),
    success: 201,
  },
  SignIn: {
    path: () => '/auth/signin',
    auth: () => ({}),
    body: () => ({ projectId: project.projectId, userId: signInUser, password: SIGN_IN_PASSWORD, expiresIn: 60 }),
    success: 200,
  },
  SetUserCredentials: {
    path: () => `/users/${uniqueId('user')}/credentials`,
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ password: 'long-enough', roles: ['member'] }),
    success: 204,
  },
};

const fieldVariants: Record<string, Variant[]> = {
  CreateProject: [
    ['name missing', drop('name'), 'body.name'],
    ['name a number', set('name', 42), 'body.name'],
    ['name empty', set('name', ''), 'body.name'],
    ['name blank', set('name', '   '), 'body.name'],
    ['name of 201 characters', set('name', long(201)), 'body.name'],
    ['projectId a number', set('projectId', 42), 'body.projectId'],
    ['projectId with upper case', set('projectId', 'Upper-Case'), 'body.projectId'],
    ['projectId with an underscore', set('projectId', 'under_score'), 'body.projectId'],
    ['projectId of one character', set('projectId', 'a'), 'body.projectId'],
    ['projectId of 64 characters', set('projectId', long(64)), 'body.projectId'],
    ['projectId starting with a dash', set('projectId', '-dash'), 'body.projectId'],
  ],
  RotateProjectKeys: [
    ['apiKey a string', set('apiKey', 'yes'), 'body.apiKey'],
    ['apiKey null', set('apiKey', null), 'body.apiKey'],
    ['signingSecret a number', set('signingSecret', 1), 'body.signingSecret'],
  ],
  CreateToken: [
    ...idVariants('userId', true),
    ['roles a string', set('roles', 'admin'), 'body.roles'],
    ['roles with an unknown role', set('roles', ['member', 'superuser']), 'body.roles.1'],
    ['roles empty', set('roles', []), 'body.roles'],
    ['roles with 6 entries', set('roles', ['guest', 'member', 'moderator', 'admin', 'owner', 'owner']), 'body.roles'],
    ['expiresIn a string', set('expiresIn', '60'), 'body.expiresIn'],
    ['expiresIn zero', set('expiresIn', 0), 'body.expiresIn'],
    ['expiresIn negative', set('expiresIn', -60), 'body.expiresIn'],
    ['expiresIn fractional', set('expiresIn', 1.5), 'body.expiresIn'],
    ['expiresIn over a day', set('expiresIn', 86_401), 'body.expiresIn'],
  ],
  SignIn: [
    ['projectId missing', drop('projectId'), 'body.projectId'],
    ['projectId a number', set('projectId', 42), 'body.projectId'],
    ['projectId not a project id', set('projectId', 'Not A Project'), 'body.projectId'],
    ...idVariants('userId', true),
    ['password missing', drop('password'), 'body.password'],
    ['password a number', set('password', 12345678), 'body.password'],
    ['password empty', set('password', ''), 'body.password'],
    ['password of 1025 characters', set('password', long(1025)), 'body.password'],
    ['expiresIn a string', set('expiresIn', '60'), 'body.expiresIn'],
    ['expiresIn zero', set('expiresIn', 0), 'body.expiresIn'],
  ],
  SetUserCredentials: [
    ['password missing', drop('password'), 'body.password'],
    ['password a number', set('password', 123456789), 'body.password'],
    ['password of 7 characters', set('password', 'short77'), 'body.password'],
    ['password of 1025 characters', set('password', long(1025)), 'body.password'],
    ['roles a string', set('roles', 'member'), 'body.roles'],
    ['roles with an unknown role', set('roles', ['root']), 'body.roles.0'],
  ],
};

describeValidationMatrix('Auth', requests, fieldVariants);
