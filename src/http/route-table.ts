import { Injectable } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { RouterLayer, routerStack } from './route-prefilter';

// Why: a known path called with the wrong method answers 405, not 404.

/**
 * Knows which paths the application serves, so that a known path called with the wrong method answers
 * 405 rather than 404 (docs/api-conventions.md).
 */
@Injectable()
export class RouteTable {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  allowsOtherMethod(method: string, path: string): boolean {
    const wanted = method.toLowerCase();
    return this.layers().some((layer) => layer.route !== undefined && !layer.route.methods[wanted] && !layer.route.methods._all && safeMatch(layer, path));
  }

  private layers(): RouterLayer[] {
    return routerStack(this.adapterHost.httpAdapter?.getInstance());
  }
}

function safeMatch(layer: RouterLayer, path: string): boolean {
  try {
    return Boolean(layer.match(path));
  } catch {
    return false;
  }
}
