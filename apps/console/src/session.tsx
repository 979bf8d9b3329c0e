import { createContext, useContext } from 'react';
import type { Schemas } from './api/client';

export type Session = Schemas['ConsoleSession'];
export type Role = Session['role'];

const RANK: Record<Role, number> = { viewer: 0, operator: 1, admin: 2 };

export const SessionContext = createContext<{ session: Session; signOut: () => void } | null>(null);

export function useSession() {
  const value = useContext(SessionContext);
  if (!value) {
    throw new Error('useSession outside a signed-in page');
  }
  return value;
}

/** Whether the signed-in token may do what needs `role`: the console offers no control the API would refuse. */
export function useCan(role: Role): boolean {
  return RANK[useSession().session.role] >= RANK[role];
}
