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
import { Conditions, ObjectName, ObservedGeneration, Replicas, ResourceMap } from "./schema/common.ts";
import { Bool, cel, celString, Int64, List, MapOf, Obj, Open, Str, Type } from "./schema/kube.ts";
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
  },
  { description: "Desired state of the Runtime." },
);

export const RuntimeStatusSchema = Obj(
  {
    observedGeneration: Type.Optional(ObservedGeneration()),
    replicas: Type.Optional(Replicas("Runtime Pods that exist.")),
    readyReplicas: Type.Optional(Replicas("Runtime Pods whose runtime and runtimed are ready.")),
    availableReplicas: Type.Optional(Replicas("Ready Runtime Pods that accept new Runs.")),
    conditions: Type.Optional(Conditions("`Ready` and `Progressing`.")),
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
