/** Everything a Runtime owns, rendered in apply order (identity first, the Deployment last). */
import { createHash } from "node:crypto";
import type { Runtime } from "@kruntimes/api";
import { R, type ResourceRef } from "@kruntimes/kube";
import { renderDeployment } from "./deployment.ts";
import { podServiceAccount, renderRole, renderRoleBinding, renderServiceAccount } from "./rbac.ts";
import type { RenderOptions } from "./render-options.ts";
import { renderService } from "./service.ts";

export interface OwnedObject {
  resource: Omit<ResourceRef, "namespace" | "name">;
  name: string;
  body: { metadata: { name: string } };
}

export interface RenderedRuntime {
  objects: OwnedObject[];
  templateHash: string;
  /** Hash of all rendered objects: unchanged means nothing to apply. */
  hash: string;
}

export function renderRuntime(rt: Runtime, o: RenderOptions): RenderedRuntime {
  const deployment = renderDeployment(rt, o);
  const bodies: [OwnedObject["resource"], { metadata: { name: string } }][] = [];
  if (podServiceAccount(rt).ours) bodies.push([R.serviceAccounts, renderServiceAccount(rt)]);
  bodies.push(
    [R.roles, renderRole(rt)],
    [R.roleBindings, renderRoleBinding(rt)],
    [R.services, renderService(rt, o)],
  );
  bodies.push([R.deployments, deployment.object]);
  const objects = bodies.map(([resource, body]) => ({ resource, name: body.metadata.name, body }));
  const hash = createHash("sha256").update(JSON.stringify(objects)).digest("hex").slice(0, 16);
  return { objects, templateHash: deployment.hash, hash };
}
