/**
 * The built-in scheduler plugins and the default profile. Filters run in profile order, the
 * cheap capacity checks before Run affinity. Preferred Run affinity weighs 2 against
 * least-loaded's 1 (kube-scheduler's InterPodAffinity default), so a stated preference beats
 * spreading.
 */
import { type ProfileEntry, Registry } from "../framework/registry.ts";
import * as leastLoaded from "./least-loaded/least-loaded.ts";
import * as podAvailable from "./pod-available/pod-available.ts";
import * as resourcesFit from "./resources-fit/resources-fit.ts";
import * as runAffinity from "./run-affinity/run-affinity.ts";
import * as workspace from "./workspace/workspace.ts";

/** What plugins read besides the cycle's Run and pods: the controller's informers. */
export interface PluginDeps {
  /** PersistentWorkspaces by `namespace/name` (the `workspace` plugin). */
  workspaces?: workspace.WorkspaceLookup;
}

export function builtinRegistry(deps: PluginDeps = {}): Registry {
  return new Registry()
    .register(podAvailable.NAME, podAvailable.New)
    .register(resourcesFit.NAME, resourcesFit.New)
    .register(leastLoaded.NAME, leastLoaded.New)
    .register(runAffinity.NAME, runAffinity.New)
    .register(workspace.NAME, workspace.factory(deps.workspaces));
}

export const DEFAULT_PROFILE: readonly ProfileEntry[] = [
  // First: a Run whose workspace is not usable is told so before anything else is looked at.
  { name: workspace.NAME },
  { name: podAvailable.NAME },
  { name: resourcesFit.NAME },
  { name: runAffinity.NAME, weight: 2 },
  { name: leastLoaded.NAME, weight: 1 },
];
