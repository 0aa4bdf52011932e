/**
 * `krt bench` on a cluster without kruntimes installed (the local development cluster): starts a
 * controller process for a fresh namespace (runtimed and the Runtime Server run as the pods'
 * containers), runs the compiled krt's bench there with the given flags, then stops the
 * controller and deletes the namespace.
 * Usage: KUBECONFIG=… [KRT_CONTROLLER_FLAGS="--flag=v …"] bun bench/hotpath/on-local-cluster.ts [krt bench flags…]
 */
import { join } from "node:path";
import { KubeClient, loadKubeconfigFile, path, R } from "@kruntimes/kube";
import {
  installedWaitingReasonFlags,
  startController,
} from "../../controller/testing/cluster/controller-process.ts";
import { installCrds } from "../../controller/testing/cluster/objects.ts";
import { testNamespace } from "../../test/support/cluster.ts";

const ROOT = join(import.meta.dir, "..", "..");
const kubeconfig = process.env.KUBECONFIG;
if (!kubeconfig) {
  console.error("error: set KUBECONFIG to the cluster to benchmark");
  process.exit(78);
}
const client = new KubeClient(loadKubeconfigFile(kubeconfig));
const bin = join(ROOT, "dist", "krt");
const build = Bun.spawnSync(["bash", join(ROOT, "krt", "build.sh"), bin], {
  stderr: "inherit",
  stdout: "inherit",
});
if (build.exitCode !== 0) process.exit(build.exitCode ?? 1);
await installCrds(client);
const ns = await testNamespace(client, "krt-bench");
// KRT_CONTROLLER_FLAGS: extra controller flags, space-separated (e.g. --bind-concurrency=64).
const flags = [
  ...installedWaitingReasonFlags(),
  ...(process.env.KRT_CONTROLLER_FLAGS ?? "").split(" ").filter(Boolean),
];
const controller = startController({ namespace: ns.name, kubeconfig, runtimed: "real", flags });
let code = 1;
const stop = async () => {
  controller.kill();
  await controller.exited;
  await client.delete(path(R.namespaces, undefined, ns.name)).catch(() => {});
};
process.once("SIGINT", () => {});
try {
  const krt = Bun.spawn([bin, "bench", "-n", ns.name, ...process.argv.slice(2)], {
    env: { ...process.env, KUBECONFIG: kubeconfig },
    stdio: ["inherit", "inherit", "inherit"],
  });
  code = await krt.exited;
  if (code !== 0) console.error(`controller log: ${controller.logFile}`);
} finally {
  await stop();
}
process.exit(code);
