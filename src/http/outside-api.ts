import { SetMetadata } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants';
import type { ModulesContainer } from '@nestjs/core';

// Why: routes served at ROOT_URL instead of /api/v1 say so where they are declared, not in a list kept elsewhere.

const OUTSIDE_API = 'anvil:outside-api';

/**
 * A route (or every route of a controller) served at ROOT_URL, outside the /api/v1 prefix: downloads, pages,
 * package registries, health checks and the plain-text key lists, as Forgejo serves them outside its API.
 */
export const OutsideApi = (): MethodDecorator & ClassDecorator => SetMetadata(OUTSIDE_API, true);

/** The paths of every route marked OutsideApi, for the global prefix's `exclude`. */
export function outsideApiPaths(modules: ModulesContainer): string[] {
  const paths: string[] = [];
  for (const module of modules.values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as Function | null;
      if (!controller) continue;
      const whole = Reflect.getMetadata(OUTSIDE_API, controller) === true;
      const base = asList(Reflect.getMetadata(PATH_METADATA, controller) as string | string[] | undefined);
      const prototype = controller.prototype as Record<string, unknown>;
      for (const name of Object.getOwnPropertyNames(prototype)) {
        const handler = prototype[name];
        if (name === 'constructor' || typeof handler !== 'function') continue;
        const own = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
        if (own === undefined || !(whole || Reflect.getMetadata(OUTSIDE_API, handler) === true)) continue;
        for (const prefix of base) for (const path of asList(own)) paths.push(joinPath(prefix, path));
      }
    }
  }
  return paths;
}

function asList(path: string | string[] | undefined): string[] {
  return path === undefined ? [''] : Array.isArray(path) ? path : [path];
}

function joinPath(prefix: string, path: string): string {
  const joined = [prefix, path]
    .map((part) => part.replace(/^\/+|\/+$/g, ''))
    .filter((part) => part !== '')
    .join('/');
  return joined === '' ? '/' : joined;
}
