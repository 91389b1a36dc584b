import { signal } from "@preact/signals";
import { ApiFailure, get } from "./api.js";

/** The signed-in person, as `GET /api/staff/me` describes them; null when nobody is signed in. */

export type Role = "OWNER" | "FINANCE" | "STAFF";

export interface Me {
  userId: string;
  email: string;
  organizationId: string;
  organizationName: string;
  /** The organization's IANA time zone, in which the pages write times (format.ts). */
  timeZone?: string;
  /** The organization's currency, in which a contact's total is counted. */
  currency?: string;
  role: Role;
  permissions: string[];
  twoFactorEnabled?: boolean;
  /** Every organization the person has joined; the header offers to move to another. */
  organizations?: { id: string; name: string; role: Role }[];
  twoFactorEnrolmentRequired?: boolean;
}

export const me = signal<Me | null | undefined>(undefined);

export async function loadMe(): Promise<void> {
  try {
    me.value = await get<Me>("/api/staff/me");
  } catch (error) {
    if (error instanceof ApiFailure && error.status === 401) me.value = null;
    else throw error;
  }
}

/** Whether the signed-in person's role carries `permission` (a page never offers what the API would refuse). */
export const can = (permission: string): boolean => me.value?.permissions.includes(permission) ?? false;
export const isOwner = (): boolean => me.value?.role === "OWNER";
