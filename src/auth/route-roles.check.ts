import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { PATH_METADATA } from '@nestjs/common/constants.js';
import { PUBLIC_ROUTE, REQUIRED_ROLE } from './auth.decorators.js';

/** Refuses to start when a route handler declares neither a role nor @Public(): no endpoint is open by accident. */
@Injectable()
export class RouteRolesCheck implements OnApplicationBootstrap {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onApplicationBootstrap(): void {
    const missing: string[] = [];
    for (const wrapper of this.discovery.getControllers()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance) {
        continue;
      }
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const handler = (prototype as Record<string, unknown>)[name] as object;
        if (Reflect.getMetadata(PATH_METADATA, handler) === undefined) {
          continue;
        }
        const targets = [handler, wrapper.metatype as object];
        const declared =
          this.reflector.getAllAndOverride<unknown>(REQUIRED_ROLE, targets as never) ??
          this.reflector.getAllAndOverride<unknown>(PUBLIC_ROUTE, targets as never);
        if (!declared) {
          missing.push(`${wrapper.name}.${name}`);
        }
      }
    }
    if (missing.length) {
      throw new Error(`routes without @RequireRole or @Public: ${missing.join(', ')}`);
    }
  }
}
