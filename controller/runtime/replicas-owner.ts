/**
 * Who owns the Deployment's `spec.replicas` when the Runtime has `spec.autoscaling`: the
 * autoscaler, which server-side applies it through the scale subresource under its own field
 * manager (first at the count there is, to take ownership). Once it owns the field the Runtime's
 * apply leaves it out — with server-side apply a field the applier drops stays as long as another
 * manager owns it, so the template apply never resets the count. Until then (a new Deployment,
 * autoscaling just turned on) the apply keeps the count there is, or starts a new Deployment at
 * minReplicas.
 */
import type { Runtime } from "@kruntimes/api";
import { replicasOwnedBy } from "../autoscale/pool-writes.ts";
import type { Deployment } from "../kube-types.ts";
import type { RenderedRuntime } from "./render/render-runtime.ts";

export function withReplicasOwner(
  rendered: RenderedRuntime,
  rt: Runtime,
  dep: Deployment | undefined,
  autoscalerManager: string,
): RenderedRuntime {
  const owned = replicasOwnedBy(dep, autoscalerManager);
  const replicas = dep?.spec?.replicas ?? rt.spec.autoscaling?.minReplicas ?? 1;
  const objects = rendered.objects.map((o) => {
    const body = o.body as { kind?: string; spec?: Record<string, unknown> };
    if (body.kind !== "Deployment" || !body.spec) return o;
    const { replicas: _, ...spec } = body.spec;
    return { ...o, body: { ...o.body, spec: owned ? spec : { ...spec, replicas } } };
  });
  // The apply is repeated when who owns the count changes.
  return { ...rendered, objects, hash: `${rendered.hash}:${owned ? "autoscaler" : replicas}` };
}
