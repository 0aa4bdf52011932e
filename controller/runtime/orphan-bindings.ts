/**
 * runtimed's `system:auth-delegator` ClusterRoleBindings are cluster-scoped, so no owner reference
 * removes them with their Runtime; the Runtime reconciler deletes one when it sees its Runtime go.
 * A Runtime deleted while no controller was leading is caught here, once per leadership: every
 * binding labelled with a Runtime (and its namespace) whose Runtime is not in the cache goes.
 */
import { Labels, MANAGED_BY, type Runtime } from "@kruntimes/api";
import { type KubeClient, path } from "@kruntimes/kube";
import type { Logger } from "pino";
import { CLUSTER_ROLE_BINDINGS, deleteBinding, NAMESPACE_LABEL } from "../rbac/auth-delegator.ts";

interface Binding {
  metadata: { name: string; labels?: Record<string, string> };
}

export function orphanBindings(bindings: Binding[], runtimeExists: (key: string) => boolean): string[] {
  const out: string[] = [];
  for (const b of bindings) {
    const l = b.metadata.labels ?? {};
    const rt = l[Labels.runtime];
    const ns = l[NAMESPACE_LABEL];
    if (!rt || !ns || l[Labels.managedBy] !== MANAGED_BY) continue;
    if (!runtimeExists(`${ns}/${rt}`)) out.push(b.metadata.name);
  }
  return out;
}

export async function sweepOrphanBindings(
  client: KubeClient,
  runtimes: { get(key: string): Runtime | undefined },
  namespace: string | undefined,
  log: Logger,
): Promise<void> {
  try {
    const list = await client.list<Binding>(path(CLUSTER_ROLE_BINDINGS), {
      labelSelector: `${Labels.managedBy}=${MANAGED_BY},${Labels.runtime}${namespace ? `,${NAMESPACE_LABEL}=${namespace}` : ""}`,
    });
    for (const name of orphanBindings(list.items, (key) => runtimes.get(key) !== undefined)) {
      if (await deleteBinding(client, name))
        log.info({ binding: name }, "deleted runtimed's binding of a Runtime that is gone");
    }
  } catch (e) {
    // Not allowed to list them (scope Namespace): nothing of ours to sweep.
    log.debug({ err: e }, "cannot list ClusterRoleBindings; skipping the orphan sweep");
  }
}
