/**
 * Starts and stops a real Kubernetes control plane on loopback: etcd, kube-apiserver,
 * kube-controller-manager and kube-scheduler, with TLS everywhere, service-account signing,
 * Node+RBAC authorization, and static tokens for tests.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { binaryPath } from "./binaries.ts";
import { writeKubeconfig } from "./kubeconfig-file.ts";
import { ManagedProcess } from "./managed-process.ts";
import { ensureTokenFile, LocalPki, type TestTokens } from "./pki.ts";
import { freePorts } from "./ports.ts";

export interface ClusterLayout {
  stateDir: string;
  repoRoot: string;
  etcdPort: number;
  etcdPeerPort: number;
  apiserverPort: number;
  kcmPort: number;
  schedulerPort: number;
  kubeletPort: number;
  /** Kubelet ports of nodes 2 and 3 (node 1 uses kubeletPort); added when a cluster grows. */
  extraKubeletPorts?: number[];
  nodeName: string;
}

export type Component = "etcd" | "kube-apiserver" | "kube-controller-manager" | "kube-scheduler";

const SERVICE_CIDR = "10.96.0.0/16";

export async function planLayout(
  stateDir: string,
  repoRoot: string,
  nodeName: string,
  nodeCount = 1,
): Promise<ClusterLayout> {
  const file = join(stateDir, "layout.json");
  if (existsSync(file)) {
    const kept = JSON.parse(readFileSync(file, "utf8")) as ClusterLayout;
    const extra = kept.extraKubeletPorts ?? [];
    if (extra.length >= nodeCount - 1) return kept;
    const taken = [
      kept.etcdPort,
      kept.etcdPeerPort,
      kept.apiserverPort,
      kept.kcmPort,
      kept.schedulerPort,
      kept.kubeletPort,
      ...extra,
    ];
    extra.push(...(await freePorts(nodeCount - 1 - extra.length, taken)));
    const grown = { ...kept, extraKubeletPorts: extra };
    writeFileSync(file, JSON.stringify(grown, null, 2));
    return grown;
  }
  // One call, so the ports are distinct (see freePorts).
  const [etcdPort, etcdPeerPort, apiserverPort, kcmPort, schedulerPort, kubeletPort, ...extraKubeletPorts] =
    (await freePorts(6 + Math.max(0, nodeCount - 1))) as [number, number, number, number, number, number];
  const layout: ClusterLayout = {
    stateDir,
    repoRoot,
    etcdPort,
    etcdPeerPort,
    apiserverPort,
    kcmPort,
    schedulerPort,
    kubeletPort,
    extraKubeletPorts,
    nodeName,
  };
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(file, JSON.stringify(layout, null, 2));
  return layout;
}

export class ControlPlane {
  readonly pki: LocalPki;
  readonly tokens: TestTokens;
  private readonly tokenFile: string;
  readonly processes = new Map<Component, ManagedProcess>();

  constructor(
    readonly layout: ClusterLayout,
    private readonly env: Record<string, string | undefined>,
    /** Every node's name; node 1 is layout.nodeName. */
    readonly nodeNames: string[] = [layout.nodeName],
  ) {
    this.pki = new LocalPki(join(layout.stateDir, "pki"));
    this.pki.ensureCa();
    const { file, tokens } = ensureTokenFile(this.pki);
    this.tokenFile = file;
    this.tokens = tokens;
    mkdirSync(this.logDir, { recursive: true });
    this.writeIdentities();
  }

  get server(): string {
    return `https://127.0.0.1:${this.layout.apiserverPort}`;
  }
  /** The apiserver's egress selector configuration (service-proxy.ts), written by the supervisor. */
  get egressConfigFile(): string {
    return join(this.layout.stateDir, "egress-selector.yaml");
  }
  get logDir(): string {
    return join(this.layout.stateDir, "logs");
  }
  kubeconfig(who: "admin" | "kcm" | "scheduler" | "node" | "nobody"): string {
    return join(this.layout.stateDir, `${who}.kubeconfig`);
  }
  /** Node 1's is `node.kubeconfig` (as with one node); node i's `node-<i>.kubeconfig`. */
  nodeKubeconfig(index: number): string {
    return index === 1 ? this.kubeconfig("node") : join(this.layout.stateDir, `node-${index}.kubeconfig`);
  }
  /** The kubelet port of node `index` (1-based). */
  kubeletPort(index: number): number {
    const port = index === 1 ? this.layout.kubeletPort : this.layout.extraKubeletPorts?.[index - 2];
    if (!port) throw new Error(`no kubelet port planned for node ${index}`);
    return port;
  }

  private writeIdentities(): void {
    const p = this.pki;
    p.ensureServiceAccountKey();
    p.ensureCert({
      name: "apiserver",
      cn: "kube-apiserver",
      usage: "server",
      sans: [
        "IP:127.0.0.1",
        "IP:10.96.0.1",
        "DNS:localhost",
        "DNS:kubernetes",
        "DNS:kubernetes.default",
        "DNS:kubernetes.default.svc",
        "DNS:kubernetes.default.svc.cluster.local",
      ],
    });
    p.ensureCert({
      name: "apiserver-kubelet-client",
      cn: "kube-apiserver-kubelet-client",
      orgs: ["system:masters"],
      usage: "client",
    });
    p.ensureCert({ name: "front-proxy-client", cn: "front-proxy-client", usage: "client" });
    p.ensureCert({ name: "etcd", cn: "etcd", usage: "both", sans: ["IP:127.0.0.1", "DNS:localhost"] });
    p.ensureCert({ name: "apiserver-etcd-client", cn: "kube-apiserver-etcd-client", usage: "client" });
    const users = {
      admin: p.ensureCert({
        name: "admin",
        cn: "kubernetes-admin",
        orgs: ["system:masters"],
        usage: "client",
      }),
      kcm: p.ensureCert({ name: "kcm", cn: "system:kube-controller-manager", usage: "client" }),
      scheduler: p.ensureCert({ name: "scheduler", cn: "system:kube-scheduler", usage: "client" }),
    };
    const ca = p.file("ca.crt");
    for (const [who, c] of Object.entries(users)) {
      writeKubeconfig(this.kubeconfig(who as "admin"), this.server, ca, who, {
        certFile: c.cert,
        keyFile: c.key,
      });
    }
    // Each node its own client identity (the Node authorizer scopes it to that node) and serving cert.
    this.nodeNames.forEach((name, i) => {
      const client = p.ensureCert({
        name: `node-${name}`,
        cn: `system:node:${name}`,
        orgs: ["system:nodes"],
        usage: "client",
      });
      p.ensureCert({
        name: `kubelet-${name}`,
        cn: `system:node:${name}`,
        usage: "server",
        sans: ["IP:127.0.0.1", "DNS:localhost", `DNS:${name}`],
      });
      writeKubeconfig(this.nodeKubeconfig(i + 1), this.server, ca, "node", {
        certFile: client.cert,
        keyFile: client.key,
      });
    });
    writeKubeconfig(this.kubeconfig("nobody"), this.server, ca, "krt-test-nobody", {
      token: this.tokens.nobody,
    });
  }

  private argv(c: Component): string[] {
    const p = (n: string) => this.pki.file(n);
    const l = this.layout;
    const bin = binaryPath(c, l.repoRoot, this.env);
    switch (c) {
      case "etcd":
        return [
          bin,
          "--name=krt-local",
          `--data-dir=${join(l.stateDir, "etcd")}`,
          `--listen-client-urls=https://127.0.0.1:${l.etcdPort}`,
          `--advertise-client-urls=https://127.0.0.1:${l.etcdPort}`,
          `--listen-peer-urls=http://127.0.0.1:${l.etcdPeerPort}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${l.etcdPeerPort}`,
          `--initial-cluster=krt-local=http://127.0.0.1:${l.etcdPeerPort}`,
          `--cert-file=${p("etcd.crt")}`,
          `--key-file=${p("etcd.key")}`,
          `--trusted-ca-file=${p("ca.crt")}`,
          "--client-cert-auth=true",
          // Tests create and delete thousands of objects; keep the database small and fast.
          "--quota-backend-bytes=4294967296",
          "--auto-compaction-mode=periodic",
          "--auto-compaction-retention=5m",
          "--unsafe-no-fsync=true",
          "--log-level=warn",
        ];
      case "kube-apiserver":
        return [
          bin,
          "--bind-address=127.0.0.1",
          "--advertise-address=127.0.0.1",
          `--secure-port=${l.apiserverPort}`,
          `--etcd-servers=https://127.0.0.1:${l.etcdPort}`,
          `--etcd-cafile=${p("ca.crt")}`,
          `--etcd-certfile=${p("apiserver-etcd-client.crt")}`,
          `--etcd-keyfile=${p("apiserver-etcd-client.key")}`,
          `--tls-cert-file=${p("apiserver.crt")}`,
          `--tls-private-key-file=${p("apiserver.key")}`,
          `--client-ca-file=${p("ca.crt")}`,
          `--token-auth-file=${this.tokenFile}`,
          `--service-account-key-file=${p("sa.pub")}`,
          `--service-account-signing-key-file=${p("sa.key")}`,
          "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
          `--service-cluster-ip-range=${SERVICE_CIDR}`,
          "--authorization-mode=Node,RBAC",
          "--enable-admission-plugins=NodeRestriction",
          // No kube-proxy here, so a Service's ClusterIP leads nowhere: the apiserver reaches the
          // cluster network (webhooks, service proxies) through the supervisor's CONNECT proxy.
          ...(existsSync(this.egressConfigFile)
            ? [`--egress-selector-config-file=${this.egressConfigFile}`]
            : []),
          "--allow-privileged=true",
          `--kubelet-client-certificate=${p("apiserver-kubelet-client.crt")}`,
          `--kubelet-client-key=${p("apiserver-kubelet-client.key")}`,
          `--kubelet-certificate-authority=${p("ca.crt")}`,
          "--kubelet-preferred-address-types=InternalIP",
          // The lease reconciler refuses loopback addresses; pods reach the API via KUBERNETES_SERVICE_HOST.
          "--endpoint-reconciler-type=none",
          // Front-proxy settings keep the extension-apiserver-authentication ConfigMap complete.
          `--requestheader-client-ca-file=${p("ca.crt")}`,
          "--requestheader-allowed-names=front-proxy-client",
          "--requestheader-username-headers=X-Remote-User",
          "--requestheader-group-headers=X-Remote-Group",
          "--requestheader-extra-headers-prefix=X-Remote-Extra-",
          `--proxy-client-cert-file=${p("front-proxy-client.crt")}`,
          `--proxy-client-key-file=${p("front-proxy-client.key")}`,
          // KRT_APISERVER_PROFILING=1 serves /debug/pprof (to the admin identity) for profiling.
          `--profiling=${this.env.KRT_APISERVER_PROFILING === "1"}`,
          "--v=1",
        ];
      case "kube-controller-manager":
        return [
          bin,
          `--kubeconfig=${this.kubeconfig("kcm")}`,
          `--authentication-kubeconfig=${this.kubeconfig("kcm")}`,
          `--authorization-kubeconfig=${this.kubeconfig("kcm")}`,
          "--bind-address=127.0.0.1",
          `--secure-port=${l.kcmPort}`,
          `--service-account-private-key-file=${p("sa.key")}`,
          `--root-ca-file=${p("ca.crt")}`,
          `--cluster-signing-cert-file=${p("ca.crt")}`,
          `--cluster-signing-key-file=${p("ca.key")}`,
          "--use-service-account-credentials=true",
          `--service-cluster-ip-range=${SERVICE_CIDR}`,
          "--leader-elect=false",
          "--controllers=*,-node-ipam-controller",
          // Deployments and ReplicaSets react within milliseconds; these are the kubelet-facing timers.
          "--node-monitor-grace-period=40s",
          "--concurrent-deployment-syncs=10",
          "--concurrent-replicaset-syncs=10",
          "--kube-api-qps=200",
          "--kube-api-burst=400",
          "--v=1",
        ];
      case "kube-scheduler":
        return [
          bin,
          `--kubeconfig=${this.kubeconfig("scheduler")}`,
          `--authentication-kubeconfig=${this.kubeconfig("scheduler")}`,
          `--authorization-kubeconfig=${this.kubeconfig("scheduler")}`,
          "--bind-address=127.0.0.1",
          `--secure-port=${l.schedulerPort}`,
          "--leader-elect=false",
          "--v=1",
        ];
    }
  }

  startComponent(c: Component): ManagedProcess {
    const proc = new ManagedProcess({ name: c, argv: this.argv(c), logFile: join(this.logDir, `${c}.log`) });
    proc.start();
    this.processes.set(c, proc);
    return proc;
  }

  async stopComponent(c: Component, graceMs = 10_000): Promise<void> {
    await this.processes.get(c)?.stop(graceMs);
  }

  /** Starts everything on a fresh etcd; resolves when the API is ready and a namespace can hold pods. */
  async start(opts: { fresh: boolean; timeoutMs?: number }): Promise<void> {
    if (opts.fresh) rmSync(join(this.layout.stateDir, "etcd"), { recursive: true, force: true });
    const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
    this.startComponent("etcd");
    this.startComponent("kube-apiserver");
    await this.waitReady(deadline);
    this.startComponent("kube-controller-manager");
    this.startComponent("kube-scheduler");
  }

  /** Polls /readyz with the admin identity; says which component log to read when it fails. */
  async waitReady(deadline: number): Promise<void> {
    const tls = {
      ca: readFileSync(this.pki.file("ca.crt"), "utf8"),
      cert: readFileSync(this.pki.file("admin.crt"), "utf8"),
      key: readFileSync(this.pki.file("admin.key"), "utf8"),
    };
    let last = "";
    while (Date.now() < deadline) {
      for (const [name, p] of this.processes) {
        if (!p.running)
          throw new Error(`${name} exited with ${p.exitCode}; see ${join(this.logDir, `${name}.log`)}`);
      }
      try {
        const res = await fetch(`${this.server}/readyz`, {
          tls,
          signal: AbortSignal.timeout(2000),
        } as RequestInit);
        if (res.ok) return;
        last = `HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`;
      } catch (e) {
        last = String(e);
      }
      await Bun.sleep(100);
    }
    throw new Error(
      `kube-apiserver not ready in time (${last}); see ${join(this.logDir, "kube-apiserver.log")}`,
    );
  }

  async stop(): Promise<void> {
    const order: Component[] = ["kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"];
    for (const c of order) await this.stopComponent(c);
  }
}
