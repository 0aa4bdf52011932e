/**
 * Names of what a WorkflowRun creates, deterministic in (WorkflowRun UID, job, step): a controller
 * restarted between "created" and "status written" finds the child under the same name instead
 * of creating a second one. Readable prefixes for people, a hash for uniqueness; at most 63
 * characters (Run names become label values).
 */
import { createHash } from "node:crypto";

function short(s: string, n: number): string {
  return s.slice(0, n).replace(/[-.]+$/, "");
}

function digest(...parts: string[]): string {
  return createHash("sha256").update(parts.join("\u0000")).digest("hex").slice(0, 6);
}

/** A step's child Run. `step` is the step's status name (`build`, or `test.lint` inside an Action). */
export function stepRunName(wfrun: string, uid: string, job: string, step: string): string {
  return `${short(wfrun, 28)}-${short(job, 12)}-${short(step.replace(/\./g, "-"), 12)}-${digest(uid, job, step)}`;
}

/** A job's PersistentWorkspace. */
export function jobWorkspaceName(wfrun: string, uid: string, job: string): string {
  return `${short(wfrun, 36)}-${short(job, 16)}-ws-${digest(uid, job, "workspace")}`;
}

/** The nested WorkflowRun of a `uses:` job. */
export function nestedRunName(wfrun: string, uid: string, job: string): string {
  return `${short(wfrun, 36)}-${short(job, 18)}-${digest(uid, job, "workflow")}`;
}
