/** The caller's bearer token from an Authorization header; never logged, only hashed. */
import { createHash } from "node:crypto";

/** The token of `Authorization: Bearer <token>`, or undefined. */
export function bearerToken(header: string | null | undefined): string | undefined {
  if (!header) return undefined;
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(header);
  return m?.[1];
}

/** What the caches key on instead of the token itself. */
export function tokenHash(token: string): string {
  return createHash("sha256").update(token).digest("base64url");
}
