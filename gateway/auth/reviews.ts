/**
 * The two Kubernetes reviews the gateway asks for: TokenReview (who is this token?) and
 * SubjectAccessReview (may that user `create` the `runs/<subresource>` of this Run?). Both are
 * `create`s on the apiserver with the gateway's own credentials (RBAC: create tokenreviews and
 * subjectaccessreviews).
 */
import { GROUP, RUN_PLURAL } from "@kruntimes/api";
import type { KubeClient } from "@kruntimes/kube";

export interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export type TokenReviewResult =
  | { authenticated: true; user: UserInfo }
  | { authenticated: false; error: string };

export async function reviewToken(client: KubeClient, token: string): Promise<TokenReviewResult> {
  const res = await client.create<{
    status?: { authenticated?: boolean; user?: UserInfo; error?: string };
  }>("/apis/authentication.k8s.io/v1/tokenreviews", {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenReview",
    spec: { token },
  });
  const s = res.status ?? {};
  if (s.authenticated && s.user?.username) return { authenticated: true, user: s.user };
  return { authenticated: false, error: s.error || "token not authenticated" };
}

/** The subresource a caller needs `create` on: `invoke` for functions, `session` for sessions. */
export type RunSubresource = "invoke" | "session";

export interface AccessTarget {
  namespace: string;
  name: string;
  subresource: RunSubresource;
}

export interface AccessReviewResult {
  allowed: boolean;
  reason?: string;
}

export async function reviewAccess(
  client: KubeClient,
  user: UserInfo,
  target: AccessTarget,
): Promise<AccessReviewResult> {
  const res = await client.create<{ status?: { allowed?: boolean; denied?: boolean; reason?: string } }>(
    "/apis/authorization.k8s.io/v1/subjectaccessreviews",
    {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: user.username,
        uid: user.uid,
        groups: user.groups,
        extra: user.extra,
        resourceAttributes: {
          namespace: target.namespace,
          verb: "create",
          group: GROUP,
          resource: RUN_PLURAL,
          subresource: target.subresource,
          name: target.name,
        },
      },
    },
  );
  return { allowed: res.status?.allowed === true, reason: res.status?.reason };
}
