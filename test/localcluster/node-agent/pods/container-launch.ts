/**
 * Everything a container attempt needs before its process can start, resolved from the pod:
 * the image map entry, the environment (ConfigMaps/Secrets read now), the bind mounts, the argv.
 * Problems kubelet reports as a waiting reason come back as one instead of an exception; API
 * errors still throw, so the pod sync retries with backoff.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Container, ContainerStateWaiting, Pod } from "../api/types.ts";
import { ContainerConfigError, containerArgv, containerEnv, processEnv } from "../env/container-env.ts";
import { FieldRefError } from "../env/field-ref.ts";
import { QuantityError } from "../env/quantity.ts";
import type { LaunchSpec } from "../runtime/container-process.ts";
import { MountError, planMounts } from "../runtime/mount-plan.ts";
import type { PodSandbox } from "./container-runtime.ts";
import type { PodContext } from "./pod-context.ts";

export type PreparedLaunch =
  | { ok: true; spec: Omit<LaunchSpec, "logFile">; imageID: string }
  | { ok: false; waiting: ContainerStateWaiting };

const isConfigError = (e: unknown) =>
  e instanceof ContainerConfigError ||
  e instanceof MountError ||
  e instanceof FieldRefError ||
  e instanceof QuantityError;

export async function prepareLaunch(
  pod: Pod,
  c: Container,
  sandbox: PodSandbox,
  ctx: PodContext,
): Promise<PreparedLaunch> {
  const images = ctx.images();
  const image = images.resolve(c.image ?? "");
  if (!image) {
    const message = `image "${c.image}" is not in the local node agent's image map ${images.file}; add it there`;
    return { ok: false, waiting: { reason: "ImageNotMapped", message } };
  }
  let vars: Map<string, string>;
  let binds: ReturnType<typeof planMounts>;
  try {
    vars = await containerEnv(pod, c, sandbox.facts, ctx.objects, ctx.service);
    binds = planMounts(c.volumeMounts ?? [], sandbox.volumes, vars);
  } catch (e) {
    if (!isConfigError(e)) throw e;
    return { ok: false, waiting: { reason: "CreateContainerConfigError", message: (e as Error).message } };
  }
  const env = processEnv(
    { PATH: ctx.defaultPath, HOME: ctx.defaultHome, ...image.env },
    vars,
    sandbox.hostname,
  );
  const attemptDir = join(sandbox.podDir, "containers", c.name);
  mkdirSync(attemptDir, { recursive: true });
  return {
    ok: true,
    imageID: image.imageID,
    spec: {
      argv: containerArgv(image, c, vars),
      env,
      wrapper: {
        binds,
        hostsFile: sandbox.hostsFile,
        hostname: sandbox.hostname,
        workingDir: c.workingDir || image.workingDir,
        startErrorFile: join(attemptDir, "start-error"),
      },
      podKey: sandbox.podKey,
      container: c.name,
    },
  };
}
