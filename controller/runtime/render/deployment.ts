/**
 * The Runtime's Deployment. Rollouts surge and never take a warm pod away before its
 * replacement is ready (maxUnavailable 0), so capacity does not dip during a template change.
 */
import { Annotations, type Runtime } from "@kruntimes/api";
import { ownedMeta, ownedNames, selectorLabels } from "./names.ts";
import { renderPodTemplate } from "./pod-template.ts";
import type { RenderOptions } from "./render-options.ts";

export function renderDeployment(rt: Runtime, o: RenderOptions) {
  const { template, hash } = renderPodTemplate(rt, o);
  const meta = ownedMeta(rt, ownedNames(rt).deployment);
  return {
    hash,
    object: {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { ...meta, annotations: { [Annotations.templateHash]: hash } },
      spec: {
        replicas: rt.spec.replicas ?? 1,
        selector: { matchLabels: selectorLabels(rt) },
        strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: "25%" } },
        revisionHistoryLimit: 3,
        template,
      },
    },
  };
}
