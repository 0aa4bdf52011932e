/**
 * `GET /api/namespaces`: the namespaces in which the caller may list Runs. Listing namespaces is
 * itself a permission many users lack; then the answer says so and the view asks for a name.
 * Otherwise one SelfSubjectAccessReview says whether the caller may list Runs everywhere, and
 * failing that one per namespace (a bounded number, a few at a time).
 */
import { GROUP, RUN_PLURAL } from "@kruntimes/api";
import { KubeError, path, R } from "@kruntimes/kube";
import type { NamespaceList } from "../shared/types.ts";
import type { ReadOnlyKubeClient } from "./read-only-client.ts";

const SSAR = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
/** More namespaces than this are not checked one by one; the view lets the user type one. */
const MAX_CHECKED = 200;
const PARALLEL = 8;

interface Review {
  status?: { allowed?: boolean };
}

export async function mayListRuns(client: ReadOnlyKubeClient, namespace?: string): Promise<boolean> {
  const review = await client.request<Review>("POST", SSAR, {
    body: {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: { resourceAttributes: { verb: "list", group: GROUP, resource: RUN_PLURAL, namespace } },
    },
  });
  return review.status?.allowed === true;
}

export async function namespacesWithRuns(client: ReadOnlyKubeClient): Promise<NamespaceList> {
  let names: string[];
  try {
    const list = await client.list<{ metadata: { name?: string } }>(path(R.namespaces));
    names = list.items.map((n) => n.metadata.name ?? "").filter(Boolean);
  } catch (e) {
    if (KubeError.is(e, 403)) return { items: [], listForbidden: true };
    throw e;
  }
  names.sort();
  if (await mayListRuns(client)) return { items: names, listForbidden: false };
  const checked = names.slice(0, MAX_CHECKED);
  const allowed: string[] = [];
  for (let i = 0; i < checked.length; i += PARALLEL) {
    const batch = checked.slice(i, i + PARALLEL);
    const ok = await Promise.all(batch.map((n) => mayListRuns(client, n)));
    batch.forEach((n, j) => {
      if (ok[j]) allowed.push(n);
    });
  }
  return { items: allowed, listForbidden: false };
}
