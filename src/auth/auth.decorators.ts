import { createParamDecorator, type ExecutionContext, SetMetadata } from '@nestjs/common';
import type { Actor, Role } from './roles.js';
import type { ConsoleSession } from './session.service.js';

export const REQUIRED_ROLE = 'tpfleet:required-role';
export const PUBLIC_ROUTE = 'tpfleet:public-route';

/** Every route declares the least role it needs; a route without a declaration is refused at boot. */
export const RequireRole = (role: Role) => SetMetadata(REQUIRED_ROLE, role);

/** Only for probes a load balancer calls without credentials (/healthz, /readyz). */
export const Public = () => SetMetadata(PUBLIC_ROUTE, true);

export interface RequestWithActor {
  actor?: Actor;
  /**
   * What the actor was authenticated by: the token's hash, and the console session when it came through the cookie.
   * A long-lived request (the SSE stream) re-checks it and listens for its revocation.
   */
  credential?: { tokenHash: string; session: ConsoleSession | null };
}

export const CurrentActor = createParamDecorator((_data: unknown, ctx: ExecutionContext): Actor => {
  const actor = ctx.switchToHttp().getRequest<RequestWithActor>().actor;
  if (!actor) {
    throw new Error('CurrentActor used on a public route');
  }
  return actor;
});
