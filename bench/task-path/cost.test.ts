import { describe, expect, test } from "bun:test";
import {
  cpuTicks,
  diffRequestCodes,
  diffRequestCosts,
  parseRequestCodes,
  parseRequestCosts,
  processGroup,
} from "./cost.ts";

const metrics = (postSum: number, postCount: number) => `
# HELP apiserver_request_duration_seconds x
apiserver_request_duration_seconds_sum{component="apiserver",group="kruntimes.io",resource="runs",scope="namespace",subresource="",verb="POST",version="v1alpha1"} ${postSum}
apiserver_request_duration_seconds_count{component="apiserver",group="kruntimes.io",resource="runs",scope="namespace",subresource="",verb="POST",version="v1alpha1"} ${postCount}
apiserver_request_duration_seconds_sum{component="apiserver",group="kruntimes.io",resource="runs",scope="namespace",subresource="status",verb="PATCH",version="v1alpha1"} 3
apiserver_request_duration_seconds_count{component="apiserver",group="kruntimes.io",resource="runs",scope="namespace",subresource="status",verb="PATCH",version="v1alpha1"} 30
apiserver_request_duration_seconds_sum{component="apiserver",group="kruntimes.io",resource="runs",scope="cluster",subresource="",verb="WATCH",version="v1alpha1"} 900
apiserver_request_duration_seconds_count{component="apiserver",group="kruntimes.io",resource="runs",scope="cluster",subresource="",verb="WATCH",version="v1alpha1"} 9
apiserver_request_duration_seconds_bucket{component="apiserver",resource="runs",verb="POST",le="0.1"} 5
`;

describe("task-path cost", () => {
  test("request costs: sums and counts per verb/resource/subresource, diffed over the window without WATCH", () => {
    const before = parseRequestCosts(metrics(1, 10));
    const after = parseRequestCosts(metrics(3.5, 20));
    expect(before.get("POST runs")).toMatchObject({ count: 10, seconds: 1 });
    expect(before.get("PATCH runs/status")).toMatchObject({ count: 30, seconds: 3 });
    const d = diffRequestCosts(before, after);
    expect(d.map((r) => r.key)).toEqual(["POST runs"]); // status unchanged, WATCH left out
    expect(d[0]?.count).toBe(10);
    expect(d[0]?.meanMs).toBeCloseTo(250, 6);
  });

  test("request codes: counts per verb/resource/subresource/code, diffed over the window without WATCH", () => {
    const text = (ok: number, failedTest: number) => `
apiserver_request_total{code="200",component="apiserver",group="kruntimes.io",resource="runs",scope="namespace",subresource="status",verb="PATCH",version="v1alpha1"} ${ok}
apiserver_request_total{code="422",component="apiserver",group="kruntimes.io",resource="runs",scope="namespace",subresource="status",verb="PATCH",version="v1alpha1"} ${failedTest}
apiserver_request_total{code="200",component="apiserver",group="kruntimes.io",resource="runs",scope="cluster",subresource="",verb="WATCH",version="v1alpha1"} 7
`;
    const before = parseRequestCodes(text(10, 1));
    expect(before.get("PATCH runs/status 422")).toBe(1);
    expect(diffRequestCodes(before, parseRequestCodes(text(30, 1)))).toEqual([["PATCH runs/status 200", 20]]);
  });

  test("process groups from command lines; others are not counted", () => {
    expect(
      processGroup("/root/.cache/kruntimes/bin/k8s-v1.37.2/kube-apiserver --bind-address=127.0.0.1"),
    ).toBe("kube-apiserver");
    expect(processGroup("/root/.cache/kruntimes/bin/etcd-v3.6.16/etcd --name=krt-local")).toBe("etcd");
    expect(processGroup("bun controller/main.ts --namespace=x")).toBe("kruntimes controller");
    expect(processGroup("bun /work/main/runtimed/main.ts")).toBe("runtimed");
    expect(processGroup("bun /work/main/runtimes/server/main.ts --runtime bash")).toBe("Runtime Server");
    expect(processGroup("bun /work/main/test/localcluster/node-agent/main.ts --config x")).toBe(
      "node agents",
    );
    expect(processGroup("/tmp/x/krt bench -n ns")).toBe("krt (the client)");
    expect(processGroup("sleep 5")).toBeUndefined();
  });

  test("CPU ticks are utime + stime, also when the command has spaces and parentheses", () => {
    const stat = "42 (bun (x) y) S 1 42 42 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 8 0 100 0 0";
    expect(cpuTicks(stat)).toBe(300);
  });
});
