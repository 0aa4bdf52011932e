/**
 * The controller process: informers (always running, so a standby is warm), the scheduler and
 * the reconcilers (only while leading), the probe/metrics server, and leader election.
 */
import type { KubeClient } from "@kruntimes/kube";
import type { Logger } from "pino";
import { Registry } from "prom-client";
import { MaintainerReconciler } from "../artifacts/maintainer-reconciler.ts";
import { AutoscaleMetrics } from "../autoscale/autoscale-metrics.ts";
import { type AutoscaleWiring, autoscaleCacheHooks, wireAutoscaler } from "../autoscale/autoscale-wiring.ts";
import { AutoscalerReconciler } from "../autoscale/autoscaler-reconciler.ts";
import { autoscalerFieldManager, PoolWrites } from "../autoscale/pool-writes.ts";
import { sweepReleasedPods } from "../autoscale/released-pods.ts";
import { ApiEventRecorder } from "../events/event-recorder.ts";
import { FunctionFinalizerReconciler } from "../gc/function-finalizer-reconciler.ts";
import { SpentPodReconciler } from "../gc/spent-pod-reconciler.ts";
import { TtlReconciler } from "../gc/ttl-reconciler.ts";
import { LeaderElector } from "../leader/leader-elector.ts";
import { ControllerMetrics } from "../metrics/controller-metrics.ts";
import { serveProbes } from "../metrics/http-server.ts";
import type { ControllerOptions } from "../options.ts";
import { PendingStatusReconciler } from "../pending/pending-status-reconciler.ts";
import { Controller } from "../reconcile/controller.ts";
import { RecoveryReconciler } from "../recovery/recovery-reconciler.ts";
import { sweepOrphanBindings } from "../runtime/orphan-bindings.ts";
import { RuntimeReconciler } from "../runtime/runtime-reconciler.ts";
import { WorkspaceWakeups } from "../scheduler/plugins/workspace/wakeups.ts";
import type { SchedulingQueue } from "../scheduler/queue/scheduling-queue.ts";
import type { Scheduler } from "../scheduler/scheduler.ts";
import type { SchedulerLoop } from "../scheduler/scheduler-loop.ts";
import { ApiRunStatusWriter } from "../status/run-status-writer.ts";
import { systemClock } from "../util/clock.ts";
import { RealTimers } from "../util/timers.ts";
import { clusterAdmissionDeps } from "../webhook/admission.ts";
import { serveWebhook, type WebhookServer } from "../webhook/webhook-server.ts";
import { WorkflowIndex } from "../workflow/workflow-index.ts";
import { WorkflowReconciler } from "../workflow/workflow-reconciler.ts";
import { wireWorkflows } from "../workflow/workflow-wiring.ts";
import { WorkspaceIndex } from "../workspace/workspace-index.ts";
import { WorkspaceReconciler } from "../workspace/workspace-reconciler.ts";
import { type WorkspaceWiring, wireWorkspaces, workspaceCacheHooks } from "../workspace/workspace-wiring.ts";
import { allInformers, createInformers, type Informers } from "./informers.ts";
import { buildScheduler } from "./scheduler-setup.ts";
import { type Controllers, wireEvents } from "./wiring.ts";

export class Manager {
  readonly registry = new Registry();
  readonly informers: Informers;
  readonly controllers: Controllers;
  private readonly timers = new RealTimers();
  private readonly scheduler: Scheduler;
  private readonly loop: SchedulerLoop;
  private elector: LeaderElector | undefined;
  private server: { port: number; stop(): void } | undefined;
  private webhook: WebhookServer | undefined;
  private leading = false;

  constructor(
    private readonly o: ControllerOptions,
    private readonly client: KubeClient,
    private readonly log: Logger,
    private readonly onLostLeadership: () => void,
  ) {
    const clock = systemClock;
    this.informers = createInformers(client, o.namespace);
    const cm = new ControllerMetrics(this.registry);
    const writer = new ApiRunStatusWriter(client);
    const controllers = {} as Controllers;
    // The workspace wake-ups reach the queue built just below.
    let queueRef: SchedulingQueue | undefined;
    const workspaceIndex = new WorkspaceIndex();
    const workspaces: WorkspaceWiring = {
      index: workspaceIndex,
      wakeups: new WorkspaceWakeups(
        workspaceIndex,
        { get: (k) => queueRef?.get(k), activate: (k) => queueRef?.activate(k) },
        this.registry,
      ),
      reconciler: () => controllers.workspace,
      log,
    };
    // The autoscaler reads the scheduler's cache and queue, built just below.
    let autoscaler: AutoscalerReconciler | undefined;
    const autoscaling: AutoscaleWiring = {
      runtimes: this.informers.runtimes,
      runs: this.informers.runs,
      deployments: this.informers.deployments,
      get reconciler() {
        return autoscaler as AutoscalerReconciler;
      },
      controller: () => controllers.autoscaler,
    };
    ({ scheduler: this.scheduler, loop: this.loop } = buildScheduler({
      o,
      client,
      clock,
      timers: this.timers,
      log,
      registry: this.registry,
      runs: this.informers.runs,
      controllers,
      plugins: { workspaces: this.informers.workspaces },
      cacheHooks: [workspaceCacheHooks(workspaces), autoscaleCacheHooks(autoscaling)],
    }));
    const cache = this.scheduler.cache;
    const queue = this.scheduler.queue;
    queueRef = queue;
    const make = (r: ConstructorParameters<typeof Controller>[0], workers: number) =>
      new Controller(r, log.child({ controller: r.name }), cm, { workers });
    controllers.runtime = make(
      new RuntimeReconciler({
        runtimes: this.informers.runtimes,
        deployments: this.informers.deployments,
        cache,
        client,
        clock,
        log,
        fieldManager: o.fieldManager,
        autoscalerFieldManager: autoscalerFieldManager(o.fieldManager),
        resyncMs: o.runtimeResyncMs,
        pendingRuns: (key) => queue.queuedOf(key),
        render: {
          runtimedImage: o.runtimedImage,
          runtimedCommand: o.runtimedCommand,
          runtimedPort: o.runtimedPort,
          leaseDurationSeconds: o.heartbeatLeaseSeconds,
          heartbeatIntervalMs: o.heartbeatIntervalMs,
          runtimedResources: { requests: { cpu: "50m", memory: "64Mi" }, limits: { memory: "256Mi" } },
          runtimeResources: { requests: { cpu: "100m", memory: "128Mi" } },
          warmPoolMax: o.warmPoolMax,
          dataplanePort: o.dataplanePort,
          dataplaneSubjects: o.dataplaneSubjects,
          sessionMaxQueuedTotal: o.sessionMaxQueuedTotal,
          sessionCloseDeadlineMs: o.sessionCloseDeadlineMs,
          dataplaneNetworkPolicy: o.dataplaneNetworkPolicy,
          ...(o.gatewayNamespace ? { gatewayNamespace: o.gatewayNamespace } : {}),
          gatewayPodLabels: o.gatewayPodLabels,
        },
      }),
      2,
    );
    controllers.pending = make(
      new PendingStatusReconciler({
        runs: this.scheduler.view,
        writes: this.scheduler,
        // Only a Run still parked shows a waiting reason; a woken one is about to be bound.
        waitingOf: (key) => {
          const qr = queue.get(key);
          if (qr?.state !== "parked" || !qr.waiting) return undefined;
          // An autoscaled pool at zero: say that it is starting, not only that it has no pods.
          const zero =
            qr.waiting.reason === "NoReadyPods" ? autoscaler?.zeroMessage(qr.runtimeKey) : undefined;
          return zero ? { ...qr.waiting, message: zero } : qr.waiting;
        },
        writer,
        clock,
        delayMs: o.waitingReasonDelayMs,
        capacityDelayMs: o.capacityWaitReasonDelayMs,
      }),
      4,
    );
    controllers.recovery = make(
      new RecoveryReconciler({
        runs: this.informers.runs,
        cache,
        writer,
        clock,
        log,
        registry: this.registry,
        options: { staleAfterMs: o.staleAfterMs, startTimeoutMs: o.startTimeoutMs },
      }),
      4,
    );
    controllers.ttl = make(
      new TtlReconciler({ runs: this.informers.runs, client, clock, registry: this.registry }),
      2,
    );
    controllers.functionFinalizer = make(
      new FunctionFinalizerReconciler({
        runs: this.informers.runs,
        client,
        clock,
        registry: this.registry,
        graceMs: 10_000,
      }),
      1,
    );
    controllers.spentPods = make(
      new SpentPodReconciler({
        pods: this.informers.pods,
        client,
        registry: this.registry,
      }),
      1,
    );
    controllers.artifacts = make(
      new MaintainerReconciler({
        runs: this.informers.runs,
        deployments: this.informers.deployments,
        client,
        log,
        fieldManager: o.fieldManager,
        render: { image: o.runtimedImage },
      }),
      1,
    );
    controllers.workspace = make(
      new WorkspaceReconciler({
        workspaces: this.informers.workspaces,
        runs: this.informers.runs,
        index: workspaces.index,
        pods: {
          pod: (key) => cache.pod(key),
          // Available now and not held or spent by a session (that pod is about to be replaced).
          bindable: (runtimeKey, now) =>
            cache.podsOf(runtimeKey).filter((p) => p.isAvailable(now) && !p.sealed),
        },
        client,
        clock,
        registry: this.registry,
        log,
      }),
      2,
    );
    const workflowIndex = new WorkflowIndex();
    controllers.workflow = make(
      new WorkflowReconciler({
        wfruns: this.informers.workflowRuns,
        runs: this.informers.runs,
        workspaces: this.informers.workspaces,
        index: workflowIndex,
        client,
        clock,
        registry: this.registry,
        log,
      }),
      2,
    );
    autoscaler = new AutoscalerReconciler({
      runtimes: this.informers.runtimes,
      deployments: this.informers.deployments,
      cache,
      queue,
      workspaces: workspaceIndex,
      writes: new PoolWrites(client, autoscalerFieldManager(o.fieldManager)),
      events: new ApiEventRecorder(client, "kruntimes-autoscaler", log),
      metrics: new AutoscaleMetrics(this.registry),
      clock,
      log: log.child({ component: "autoscaler" }),
    });
    controllers.autoscaler = make(autoscaler, 2);
    this.controllers = controllers;
    wireAutoscaler(autoscaling);
    wireEvents(this.informers, this.scheduler, controllers, log);
    wireWorkspaces(this.informers, workspaces);
    wireWorkflows(this.informers, workflowIndex, controllers.workflow, log);
  }

  get synced(): boolean {
    return allInformers(this.informers).every((i) => i.hasSynced);
  }

  get metricsPort(): number | undefined {
    return this.server?.port;
  }

  async start(): Promise<void> {
    this.server = serveProbes({
      host: this.o.metricsHost,
      port: this.o.metricsPort,
      registry: this.registry,
      ready: () => this.synced,
      describe: () => ({
        leader: this.leading,
        queue: this.scheduler.queue.sizes,
        pods: this.scheduler.cache.podCount,
      }),
    });
    // The admission webhook needs no cache and no leadership: every replica serves it at once.
    if (this.o.webhook)
      this.webhook = await serveWebhook(
        this.o.webhook,
        clusterAdmissionDeps(this.client, this.o.webhook.controllerUser),
        this.log.child({ component: "webhook" }),
      );
    for (const i of allInformers(this.informers)) i.start();
    await Promise.all(allInformers(this.informers).map((i) => i.waitForSync()));
    this.log.info({ metricsPort: this.server.port }, "caches synced");
    if (!this.o.leaderElect) return this.lead();
    this.elector = new LeaderElector(
      this.client,
      {
        namespace: this.o.leaseNamespace,
        name: this.o.leaseName,
        identity: this.o.identity,
        leaseDurationMs: this.o.leaseDurationMs,
        renewDeadlineMs: this.o.renewDeadlineMs,
        retryPeriodMs: this.o.retryPeriodMs,
      },
      { started: () => this.lead(), stopped: () => this.onLostLeadership() },
      this.log,
    );
    void this.elector.run();
  }

  private lead(): void {
    this.leading = true;
    this.loop.start();
    for (const c of Object.values(this.controllers)) c.start();
    void sweepOrphanBindings(this.client, this.informers.runtimes, this.o.namespace, this.log);
    void sweepReleasedPods(this.client, this.o.namespace, this.log);
    this.log.info({ identity: this.o.identity }, "scheduling and reconciling");
  }

  async stop(): Promise<void> {
    this.loop.stop();
    await Promise.all(Object.values(this.controllers).map((c) => c.stop()));
    await this.elector?.stop();
    this.leading = false;
    for (const i of allInformers(this.informers)) i.stop();
    this.timers.clearAll();
    this.server?.stop();
    await this.webhook?.close();
  }
}
