export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

/** viewer reads; operator also acts on boards and jobs; admin also manages boards, tokens and settings. */
export function roleAllows(held: Role, required: Role): boolean {
  return RANK[held] >= RANK[required];
}

/** Who made a request, as the audit log and timelines name them. */
export interface Actor {
  tokenId: string;
  name: string;
  role: Role;
}
