/**
 * The message a parked Run shows in status.message. The scheduler's statuses are shared
 * constants (its cycle allocates nothing per Run), so the Run's own names are added here, where
 * the status is written: a user reading `kubectl get run -o yaml` sees which Runtime was looked
 * for and what to do about it.
 */
import { Reason, type Run, type WaitingReason } from "@kruntimes/api";

export function waitingMessage(run: Run, reason: WaitingReason, message: string): string {
  const ns = run.metadata.namespace ?? "default";
  const runtime = run.spec.runtime;
  switch (reason) {
    case Reason.RuntimeNotFound:
      return `Runtime "${runtime}" not found in namespace "${ns}": create it, or fix spec.runtime (kubectl get runtimes -n ${ns}); the Run is placed as soon as it exists`;
    case Reason.NoReadyPods:
      return `Runtime "${runtime}": ${message}`;
    case Reason.WorkspaceUnavailable:
      // The workspace plugin's PreFilter messages name the workspace already; a Filter summary
      // ("0/3 pods can take the Run: 3 not the workspace's pod") means its pod is not among them.
      if (!message.startsWith("0/")) return message;
      return `PersistentWorkspace "${run.spec.workspace?.name ?? ""}": its bound pod cannot take the Run (${message}); if that pod is gone the workspace turns Lost`;
    default:
      return message;
  }
}
