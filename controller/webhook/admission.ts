/**
 * Who may use a PersistentWorkspace, decided at admission (a validating webhook the controller
 * serves; the chart's ValidatingWebhookConfiguration sends only what concerns workspaces):
 * - CREATE of a Run with `spec.workspace`: the requesting user must be allowed the verb `use` on
 *   `persistentworkspaces/<name>` in the Run's namespace (group kruntimes.io), asked with a
 *   LocalSubjectAccessReview carrying the user's name, UID, groups and extra. The controller's own
 *   ServiceAccount is not asked about: it passes only for workspaces it manages (label
 *   `app.kubernetes.io/managed-by: kruntimes`), so nobody can make the controller act on a
 *   workspace they could not use themselves.
 * - CREATE or UPDATE of a PersistentWorkspace that sets that label: only the controller's
 *   ServiceAccount may, which keeps "managed by the controller" unforgeable.
 * `spec.workspace` is immutable (CEL), so UPDATEs of Runs need no check.
 */
import {
  ACTION_PLURAL,
  type ActionSpec,
  GROUP,
  type Issue,
  Labels,
  MANAGED_BY,
  type PersistentWorkspace,
  RUN_PLURAL,
  type Run,
  validateActionSpec,
  validateWorkflowRunSpec,
  validateWorkflowSpec,
  WORKFLOW_PLURAL,
  WORKFLOW_RUN_PLURAL,
  WORKSPACE_PLURAL,
  type WorkflowRunSpec,
  type WorkflowSpec,
  WorkspaceResource,
} from "@kruntimes/api";
import { type KubeClient, KubeError, path } from "@kruntimes/kube";

export interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** admission.k8s.io/v1 AdmissionRequest, the fields read here. */
export interface AdmissionRequest {
  uid: string;
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  operation: "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
  namespace?: string;
  userInfo: UserInfo;
  object?: unknown;
  oldObject?: unknown;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code: number; reason?: string; message: string };
}

export interface AdmissionDeps {
  /** The controller's own ServiceAccount as a username (system:serviceaccount:<ns>:<name>). */
  controllerUser: string;
  /** May `user` do `verb` on `<resource>/<name>` (default persistentworkspaces; name "" = any) in `namespace`? */
  access(user: UserInfo, namespace: string, verb: string, name: string, resource?: string): Promise<boolean>;
  /** The workspace, or undefined when it does not exist. */
  workspace(namespace: string, name: string): Promise<PersistentWorkspace | undefined>;
}

export const USE_VERB = "use";

function allow(uid: string): AdmissionResponse {
  return { uid, allowed: true };
}

function deny(uid: string, message: string, code = 403): AdmissionResponse {
  const reason = code === 403 ? "Forbidden" : code === 422 ? "Invalid" : "InternalError";
  return { uid, allowed: false, status: { code, reason, message } };
}

function managedByUs(labels: Record<string, string> | undefined): boolean {
  return labels?.[Labels.managedBy] === MANAGED_BY;
}

export async function review(req: AdmissionRequest, d: AdmissionDeps): Promise<AdmissionResponse> {
  if (req.resource.group !== GROUP || req.subResource) return allow(req.uid);
  try {
    if (req.resource.resource === RUN_PLURAL && req.operation === "CREATE") return await reviewRun(req, d);
    if (
      req.resource.resource === WORKSPACE_PLURAL &&
      (req.operation === "CREATE" || req.operation === "UPDATE")
    )
      return reviewWorkspace(req, d);
    if (
      [WORKFLOW_RUN_PLURAL, WORKFLOW_PLURAL, ACTION_PLURAL].includes(req.resource.resource) &&
      (req.operation === "CREATE" || req.operation === "UPDATE")
    )
      return await reviewWorkflow(req, d);
    return allow(req.uid);
  } catch (e) {
    // Failing closed: an authorization question that could not be answered is a no.
    const what =
      req.resource.resource === RUN_PLURAL || req.resource.resource === WORKSPACE_PLURAL
        ? "PersistentWorkspace"
        : "WorkflowRun";
    return deny(req.uid, `could not check ${what} access (${(e as Error).message}); try again`, 500);
  }
}

async function reviewRun(req: AdmissionRequest, d: AdmissionDeps): Promise<AdmissionResponse> {
  const run = req.object as Run | undefined;
  const name = run?.spec?.workspace?.name;
  if (!name) return allow(req.uid);
  const ns = req.namespace ?? run?.metadata?.namespace ?? "";
  const user = req.userInfo;
  if (user.username === d.controllerUser) {
    const ws = await d.workspace(ns, name);
    if (ws && managedByUs(ws.metadata.labels)) return allow(req.uid);
    return deny(
      req.uid,
      `the kruntimes controller places Runs only on PersistentWorkspaces it manages (label ${Labels.managedBy}=${MANAGED_BY}); PersistentWorkspace "${name}" in namespace "${ns}" ${ws ? "is not one" : "does not exist"}`,
    );
  }
  if (await d.access(user, ns, USE_VERB, name)) return allow(req.uid);
  return deny(
    req.uid,
    `user "${user.username}" may not use PersistentWorkspace "${name}" in namespace "${ns}": a Run naming a workspace needs the verb "${USE_VERB}" on ${WORKSPACE_PLURAL}/${name} (apiGroups: [${GROUP}], resources: [${WORKSPACE_PLURAL}], resourceNames: [${name}], verbs: [${USE_VERB}]); ask an administrator of the namespace for it`,
  );
}

function reviewWorkspace(req: AdmissionRequest, d: AdmissionDeps): AdmissionResponse {
  const labels = (req.object as PersistentWorkspace | undefined)?.metadata?.labels;
  const old = (req.oldObject as PersistentWorkspace | undefined)?.metadata?.labels;
  if (!managedByUs(labels) || (req.operation === "UPDATE" && managedByUs(old))) return allow(req.uid);
  if (req.userInfo.username === d.controllerUser) return allow(req.uid);
  return deny(
    req.uid,
    `the label ${Labels.managedBy}=${MANAGED_BY} on a PersistentWorkspace is reserved for the kruntimes controller (it lets the controller's own Runs use the workspace); remove it`,
  );
}

/**
 * Workflows, Actions and WorkflowRuns: the graph and expression rules the schema cannot express
 * (validateWorkflowRunSpec and friends), refused with every problem listed. A WorkflowRun's
 * creator must also be allowed to create Runs in the namespace: the controller creates its
 * steps, and must not run code for someone who could not run it themselves.
 */
async function reviewWorkflow(req: AdmissionRequest, d: AdmissionDeps): Promise<AdmissionResponse> {
  const obj = req.object as { spec?: unknown; metadata?: { namespace?: string } } | undefined;
  const spec = obj?.spec;
  if (!spec || typeof spec !== "object") return allow(req.uid);
  let issues: Issue[];
  switch (req.resource.resource) {
    case WORKFLOW_RUN_PLURAL:
      issues = validateWorkflowRunSpec(spec as WorkflowRunSpec);
      break;
    case WORKFLOW_PLURAL:
      issues = validateWorkflowSpec(spec as WorkflowSpec);
      break;
    default:
      issues = validateActionSpec(spec as ActionSpec);
  }
  if (issues.length) {
    const shown = issues.slice(0, 10).map((i) => `${i.path}: ${i.message}`);
    if (issues.length > 10) shown.push(`… and ${issues.length - 10} more`);
    return deny(req.uid, `invalid ${req.resource.resource}: ${shown.join("; ")}`, 422);
  }
  if (req.resource.resource !== WORKFLOW_RUN_PLURAL || req.operation !== "CREATE") return allow(req.uid);
  const user = req.userInfo;
  if (user.username === d.controllerUser) return allow(req.uid);
  const ns = req.namespace ?? obj?.metadata?.namespace ?? "";
  if (await d.access(user, ns, "create", "", RUN_PLURAL)) return allow(req.uid);
  return deny(
    req.uid,
    `user "${user.username}" may not create WorkflowRuns in namespace "${ns}" without being allowed to create Runs there (its steps are Runs): ask an administrator of the namespace for create on runs.${GROUP}`,
  );
}

/** The real checks: a LocalSubjectAccessReview (namespaced, so a Role can grant it) and a GET. */
export function clusterAdmissionDeps(client: KubeClient, controllerUser: string): AdmissionDeps {
  return {
    controllerUser,
    async access(user, namespace, verb, name, resource = WORKSPACE_PLURAL) {
      const res = await client.create<{ status?: { allowed?: boolean } }>(
        `/apis/authorization.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/localsubjectaccessreviews`,
        {
          apiVersion: "authorization.k8s.io/v1",
          kind: "LocalSubjectAccessReview",
          metadata: { namespace },
          spec: {
            user: user.username,
            ...(user.uid ? { uid: user.uid } : {}),
            ...(user.groups ? { groups: user.groups } : {}),
            ...(user.extra ? { extra: user.extra } : {}),
            resourceAttributes: { namespace, verb, group: GROUP, resource, ...(name ? { name } : {}) },
          },
        },
      );
      return res.status?.allowed === true;
    },
    async workspace(namespace, name) {
      try {
        return await client.get<PersistentWorkspace>(path(WorkspaceResource, namespace, name));
      } catch (e) {
        if (e instanceof KubeError && e.code === 404) return undefined;
        throw e;
      }
    },
  };
}
