/** Who is signed in (the backend's /api/session) and the namespace being looked at. */
import { signal } from "@preact/signals";
import type { SessionInfo } from "../../shared/types.ts";
import { getJson, RequestFailed, tokenStore } from "./api.ts";

export const session = signal<SessionInfo | undefined>(undefined);
/** The session check is done (signed in, local mode, or a sign-in is needed). */
export const sessionChecked = signal(false);

/**
 * Whether a view may open its streams before the session check answers: a token is stored, or
 * the server says it acts with its own kubeconfig (local mode). A wrong guess costs a 401 that
 * sends the user to sign in.
 */
export function probablySignedIn(): boolean {
  const meta = document.querySelector('meta[name="kruntimes-auth"]')?.getAttribute("content");
  return meta === "kubeconfig" || tokenStore.get() !== null;
}

export async function checkSession(): Promise<RequestFailed | undefined> {
  try {
    session.value = await getJson<SessionInfo>("/api/session");
    return undefined;
  } catch (e) {
    session.value = undefined;
    return e instanceof RequestFailed
      ? e
      : new RequestFailed({ status: 0, reason: "Unavailable", message: String(e) });
  } finally {
    sessionChecked.value = true;
  }
}

export async function signIn(token: string): Promise<RequestFailed | undefined> {
  tokenStore.set(token.trim());
  const failed = await checkSession();
  if (failed) tokenStore.clear();
  return failed;
}

export function signOut(): void {
  tokenStore.clear();
  session.value = undefined;
}

const NS_KEY = "kruntimes.dashboard.namespace";
export const lastNamespace = {
  get: () => sessionStorage.getItem(NS_KEY),
  set: (ns: string) => sessionStorage.setItem(NS_KEY, ns),
};
