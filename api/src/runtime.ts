/** `Runtime`: a pool of warm Runtime Pods (one Deployment) that Runs are placed on. */
import type { Static } from "@sinclair/typebox";
import {
  type API_VERSION,
  DEFAULT_RUNS_PER_POD,
  Limits,
  RUNS_RESOURCE,
  RUNTIME_CONTAINER,
  type RUNTIME_KIND,
  RUNTIMED_CONTAINER,
  WORKSPACE_MOUNT_PATH,
} from "./constants.ts";
import {
  Conditions,
  DURATION_PATTERN,
  ObjectName,
  ObservedGeneration,
  Replicas,
  ResourceMap,
} from "./schema/common.ts";
import { Bool, cel, celString, Int32, Int64, List, MapOf, Num, Obj, Open, Str, Type } from "./schema/kube.ts";
import type { ObjectMeta } from "./schema/meta.ts";

/** A label key: an optional DNS-subdomain prefix and '/', then a name of at most 63 characters. */
const LABEL_KEY_PATTERN =
  "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$";

const ContainerSchema = Open(
  {
    name: Str(63, {
      description: "Container name (DNS-1123 label), unique within the pod.",
      minLength: 1,
      pattern: "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
    }),
    image: Type.Optional(Str(1024, { description: "Container image." })),
  },
  {
    description:
      "A Kubernetes Container. Only `name` and `image` are checked here; every other field is kept as given and validated by the apiserver when the controller writes the Deployment.",
  },
);

const PodSpecSchema = Open(
  {
    containers: List(ContainerSchema, Limits.containerCount, {
      description: `Containers of the Runtime Pod; one must be named \`${RUNTIME_CONTAINER}\`.`,
      minItems: 1,
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["name"],
    }),
  },
  {
    description:
      "A Kubernetes PodSpec. Only `containers[].name` and `containers[].image` are checked here; the rest is kept as given.",
    "x-kubernetes-validations": [
      cel(
        `self.containers.exists(c, c.name == '${RUNTIME_CONTAINER}')`,
        `spec.template.spec.containers needs a container named "${RUNTIME_CONTAINER}": it runs the Runtime Server`,
      ),
      cel(
        `!self.containers.exists(c, c.name == '${RUNTIMED_CONTAINER}')`,
        `the container name "${RUNTIMED_CONTAINER}" is reserved for the sidecar the controller injects; rename that container`,
      ),
    ],
  },
);

const PodTemplateSchema = Obj(
  {
    metadata: Type.Optional(
      Obj(
        {
          // Checked here as the apiserver checks Pod labels: a bad one would only fail later,
          // when the controller writes the Deployment.
          labels: Type.Optional(
            MapOf(
              Str(63, {
                description: "Label value.",
                pattern: "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$",
              }),
              64,
              {
                description: "Labels of the Runtime Pods.",
                "x-kubernetes-validations": [
                  cel(
                    `self.all(k, size(k) <= ${Limits.labelKeyLength} && k.matches(${celString(LABEL_KEY_PATTERN)}))`,
                    "label keys are a name of at most 63 letters, digits, '-', '_' and '.', starting and ending with a letter or digit, with an optional DNS-subdomain prefix and '/'",
                  ),
                ],
              },
            ),
          ),
          annotations: Type.Optional(
            MapOf(Str(65536, { description: "Annotation value." }), 64, {
              description: "Annotations of the Runtime Pods.",
            }),
          ),
        },
        { description: "Labels and annotations for the Runtime Pods; other metadata is ignored." },
      ),
    ),
    spec: PodSpecSchema,
  },
  {
    description:
      "The Pod template of the Runtime's Deployment. The controller injects the `runtimed` sidecar, the shared socket volume and the workspace volume.",
  },
);

const S3StoreSchema = Obj(
  {
    bucket: Str(63, {
      description: "Bucket name.",
      minLength: 3,
      pattern: "^[a-z0-9][a-z0-9.-]*[a-z0-9]$",
    }),
    prefix: Type.Optional(
      Str(1024, { description: "Key prefix under which this Runtime's artifacts are stored." }),
    ),
    region: Type.Optional(Str(64, { description: "Region of the bucket.", pattern: "^[a-z0-9-]+$" })),
    endpoint: Type.Optional(
      Str(Limits.urlLength, {
        description: "S3-compatible endpoint URL, for stores other than AWS (MinIO, Ceph, …).",
        pattern: "^https?://",
      }),
    ),
    pathStyle: Type.Optional(
      Bool({ description: "Address the bucket in the URL path instead of the host name.", default: false }),
    ),
    credentialsSecretRef: Type.Optional(
      Obj(
        {
          name: ObjectName(
            "Secret in the Runtime's namespace with keys `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY`.",
          ),
        },
        { description: "Credentials; without it the pod's ambient credentials are used." },
      ),
    ),
  },
  { description: "Store artifacts in an S3-compatible bucket." },
);

const FilesystemStoreSchema = Obj(
  {
    claimName: ObjectName(
      "PersistentVolumeClaim in the Runtime's namespace, mounted into every Runtime Pod.",
    ),
  },
  { description: "Store artifacts on a shared PersistentVolumeClaim." },
);

export const ArtifactStoreSchema = Obj(
  {
    s3: Type.Optional(S3StoreSchema),
    filesystem: Type.Optional(FilesystemStoreSchema),
    maxArtifactBytes: Type.Optional(
      Int64({
        description:
          "Largest artifact a Run may store (a file, or a directory's tar.gz), in bytes; a larger one fails the Run with `ArtifactsRejected`.",
        minimum: 1,
        default: 1024 * 1024 * 1024,
      }),
    ),
    maxTotalBytes: Type.Optional(
      Int64({
        description: "Most bytes one attempt may store in all its artifacts together.",
        minimum: 1,
        default: 4 * 1024 * 1024 * 1024,
      }),
    ),
  },
  {
    description: "Where Runs on this Runtime store their artifacts. Exactly one of `s3` or `filesystem`.",
    "x-kubernetes-validations": [
      cel("has(self.s3) != has(self.filesystem)", "spec.artifactStore needs exactly one of s3 or filesystem"),
    ],
  },
);

/** Defaults of `spec.autoscaling`, also the controller's fallbacks (one place). */
export const AutoscalingDefaults = {
  targetUtilization: 0.7,
  scaleUpStabilization: "0s",
  scaleDownDelay: "2m",
  drainTimeout: "10m",
} as const;

/** A Go-style duration that may be zero (`0s`): a window that is off. */
function Window(description: string, dflt: string) {
  return Str(Limits.durationLength, { description, pattern: DURATION_PATTERN, default: dflt });
}

export const AutoscalingSchema = Obj(
  {
    minReplicas: Replicas(
      "Fewest pods to keep. 0 lets the pool scale to zero: the first Run then waits for a pod to start (its Pending message says so).",
    ),
    maxReplicas: Int32({
      description: "Most pods the autoscaler may run.",
      minimum: 1,
      maximum: Limits.replicas,
    }),
    targetUtilization: Type.Optional(
      Num({
        description:
          "Share of the pool's capacity the autoscaler aims to have in use, counting Pending Runs that fit a pod as in use (a Run needing more than one pod offers is not counted). Per resource in `spec.capacity`; the most demanding resource decides.",
        minimum: 0.1,
        maximum: 1,
        default: AutoscalingDefaults.targetUtilization,
      }),
    ),
    scaleUpStabilization: Type.Optional(
      Window(
        "Scale up only to the lowest count wanted during this window (0s: at once, the default). Longer smooths out short bursts at the cost of Runs waiting longer.",
        AutoscalingDefaults.scaleUpStabilization,
      ),
    ),
    scaleDownDelay: Type.Optional(
      Window(
        "Scale down only to the highest count wanted during this window, so a pool is not shrunk in a lull between bursts (default 2m).",
        AutoscalingDefaults.scaleDownDelay,
      ),
    ),
    drainTimeout: Type.Optional(
      Window(
        "How long a pod chosen for a scale-down may take to finish its Runs (no new Run is placed on it meanwhile). When it is not empty by then it is put back in service and left alone for as long again: running work is never stopped by a scale-down (default 10m).",
        AutoscalingDefaults.drainTimeout,
      ),
    ),
  },
  {
    description:
      "Size the pool from its load instead of `spec.replicas`: capacity in use plus the demand of Pending Runs. While set, the controller owns the Deployment's replica count and `spec.replicas` cannot be changed (nor `kubectl scale`).",
    "x-kubernetes-validations": [
      cel(
        "self.minReplicas <= self.maxReplicas",
        "spec.autoscaling.minReplicas must not be greater than maxReplicas",
      ),
    ],
  },
);

export type Autoscaling = Static<typeof AutoscalingSchema>;

export const RuntimeSpecSchema = Obj(
  {
    replicas: Type.Optional(
      Replicas("Number of warm Runtime Pods to keep; 0 keeps the Runtime with no pods.", { default: 1 }),
    ),
    capacity: Type.Optional(
      ResourceMap(
        "Logical resources each pod offers to Runs. The built-in `runs` is the number of Runs a pod executes at once; " +
          `it is ${DEFAULT_RUNS_PER_POD} when not given.`,
        { default: { runs: DEFAULT_RUNS_PER_POD } },
      ),
    ),
    template: PodTemplateSchema,
    workspace: Type.Optional(
      Open(
        {},
        {
          description: `A Kubernetes VolumeSource mounted at \`${WORKSPACE_MOUNT_PATH}\` in the runtime container (exactly one volume type).`,
          minProperties: 1,
          maxProperties: 1,
          default: { emptyDir: {} },
        },
      ),
    ),
    artifactStore: Type.Optional(ArtifactStoreSchema),
    autoscaling: Type.Optional(AutoscalingSchema),
  },
  {
    description: "Desired state of the Runtime.",
    "x-kubernetes-validations": [
      // Also checked on the scale subresource: the apiserver validates the whole object there.
      cel(
        "!has(self.autoscaling) || !has(oldSelf.autoscaling) || (has(self.replicas) ? self.replicas : 1) == (has(oldSelf.replicas) ? oldSelf.replicas : 1)",
        "spec.replicas cannot be changed while spec.autoscaling is set (kubectl scale too): the autoscaler sizes the pool. Change spec.autoscaling.minReplicas/maxReplicas, or remove spec.autoscaling to size the pool by hand",
      ),
    ],
  },
);

export const RuntimeStatusSchema = Obj(
  {
    observedGeneration: Type.Optional(ObservedGeneration()),
    replicas: Type.Optional(Replicas("Runtime Pods that exist.")),
    readyReplicas: Type.Optional(Replicas("Runtime Pods whose runtime and runtimed are ready.")),
    availableReplicas: Type.Optional(Replicas("Ready Runtime Pods that accept new Runs.")),
    pendingRuns: Type.Optional(
      Int32({
        minimum: 0,
        maximum: 2147483647,
        description:
          "Pending Runs naming this Runtime that the scheduler holds (queued or waiting for a pod), updated at most every 2 s while it changes. Each Run's own `waitingReason` is written only once it has waited (1 s; 10 s for InsufficientCapacity).",
      }),
    ),
    conditions: Type.Optional(Conditions("`Ready` and `Progressing`.")),
    autoscaling: Type.Optional(
      Obj(
        {
          currentReplicas: Type.Optional(Replicas("The Deployment's replica count the autoscaler last saw.")),
          desiredReplicas: Type.Optional(Replicas("The count the autoscaler wants now.")),
          lastScaleTime: Type.Optional(
            Str(64, {
              description: "When the autoscaler last changed the replica count (RFC 3339).",
              format: "date-time",
            }),
          ),
          lastDecision: Type.Optional(
            Obj(
              {
                reason: Str(64, {
                  description:
                    "`ScaleUp`, `ScaleUpFromZero`, `ScaleDownStarted` (pods draining), `ScaleDown` (a drained pod removed), `DrainCancelled`, `DrainTimedOut`, `Steady`.",
                }),
                message: Str(1024, { description: "The numbers behind it, for people." }),
                replicas: Replicas("The replica count it decided on."),
                time: Str(64, { description: "When (RFC 3339).", format: "date-time" }),
              },
              { description: "The last scaling decision and why." },
            ),
          ),
          drainingPods: Type.Optional(
            List(Str(253, { description: "Pod name." }), Limits.replicas, {
              description: "Pods chosen for a scale-down: no new Run is placed on them, they go once empty.",
            }),
          ),
        },
        { description: "What the autoscaler sees and decided (only with spec.autoscaling)." },
      ),
    ),
  },
  { description: "Observed state of the Runtime, written by the controller." },
);

export type RuntimeSpec = Static<typeof RuntimeSpecSchema>;
export type RuntimeStatus = Static<typeof RuntimeStatusSchema>;
export type ArtifactStore = Static<typeof ArtifactStoreSchema>;
export type PodTemplate = Static<typeof PodTemplateSchema>;

export interface Runtime {
  apiVersion: typeof API_VERSION;
  kind: typeof RUNTIME_KIND;
  metadata: ObjectMeta;
  spec: RuntimeSpec;
  status?: RuntimeStatus;
}

/** `spec.capacity` with the API's default applied: `runs` is `DEFAULT_RUNS_PER_POD` unless given. */
export function runtimeCapacity(spec: Pick<RuntimeSpec, "capacity">): Record<string, number> {
  return { [RUNS_RESOURCE]: DEFAULT_RUNS_PER_POD, ...spec.capacity };
}
