import { readdirSync } from 'node:fs';
import * as path from 'node:path';
import { expect } from 'vitest';
import { areas, type HttpRoute } from '#wiring';

/**
 * The route matrices (validation, tenant isolation, roles) have a file per area of the wiring table:
 * `test/e2e/<matrix>/<area>.test.ts`, whose case table covers exactly that area's HTTP routes. Each
 * file checks that (`expectMatrixFile` in its completeness test), so that together they cover every
 * route, and a new area adds one file per matrix.
 */

/** The areas with HTTP routes, each of which has a file in every route matrix. */
export const routeAreas = areas.filter((area) => (area.httpRoutes ?? []).length > 0);

/** The HTTP routes of an area, in wiring-table order. */
export function routesOf(areaId: string): readonly HttpRoute[] {
  const area = areas.find((candidate) => candidate.id === areaId);
  if (!area) throw new Error(`No area ${areaId} in the wiring table`);
  return area.httpRoutes ?? [];
}

/** The file of an area in a matrix folder. */
export const matrixFileOf = (areaId: string) => `${areaId.toLowerCase()}.test.ts`;

/**
 * Expects the running test file to be the file of `areaId` in its matrix folder, and the folder to
 * hold a file for every area with HTTP routes and no other.
 */
export function expectMatrixFile(areaId: string): void {
  const testPath = expect.getState().testPath as string;
  const files = readdirSync(path.dirname(testPath)).filter((file) => file.endsWith('.test.ts'));

  expect(path.basename(testPath)).toBe(matrixFileOf(areaId));
  expect(files.sort()).toEqual(routeAreas.map((area) => matrixFileOf(area.id)).sort());
}
