"""Unit tests: the SDK's pure logic (no cluster)."""

from __future__ import annotations

import asyncio
import io
import json
import os
import stat
import sys
import textwrap

import pytest

import kruntimes
from kruntimes import _convert as cv
from kruntimes import _gateway as gw
from kruntimes import _logs as lg
from kruntimes import _spec as spec
from kruntimes import errors as er
from kruntimes._kube import LineSplitter
from kruntimes.gateway.v1 import function_pb2, session_pb2
from kruntimes.models import Run, TaskResult

# --- errors -------------------------------------------------------------------------------------


def _detail(msg: object) -> tuple[str, bytes]:
    return (msg.DESCRIPTOR.full_name, msg.SerializeToString())  # type: ignore[attr-defined]


def test_codes_map_to_typed_errors() -> None:
    cases = {
        "unauthenticated": er.Unauthenticated,
        "permission_denied": er.PermissionDenied,
        "not_found": er.NotFound,
        "already_exists": er.AlreadyExists,
        "invalid_argument": er.InvalidArgument,
        "unavailable": er.Unavailable,
        "deadline_exceeded": er.DeadlineExceeded,
        "canceled": er.Cancelled,
        "internal": er.InternalError,
        "unknown": er.InternalError,
        "failed_precondition": er.NotReady,
        "resource_exhausted": er.Busy,
    }
    for code, cls in cases.items():
        e = er.from_gateway(code, "what happened: what to do")
        assert type(e) is cls, code
        assert isinstance(e, er.KruntimesError)
        assert e.code == code and str(e) == "what happened: what to do"


def test_handler_error_detail() -> None:
    d = function_pb2.HandlerError(type="ValueError", message="asked to fail", traceback="Traceback…",
                                  exit_code=0, invocation_id="inv-1")
    e = er.from_gateway("unknown", "the handler raised", [_detail(d)])
    assert isinstance(e, er.HandlerError)
    assert (e.type, e.handler_message, e.traceback, e.invocation_id) == ("ValueError", "asked to fail", "Traceback…", "inv-1")
    assert e.status == 500


def test_not_ready_detail() -> None:
    d = function_pb2.RunNotReady(phase="Succeeded", mode="session")
    e = er.from_gateway("failed_precondition", "not ready", [_detail(d)])
    assert isinstance(e, er.NotReady) and (e.phase, e.mode) == ("Succeeded", "session")
    bare = er.from_gateway("failed_precondition", "finalizing")
    assert isinstance(bare, er.NotReady) and bare.phase == ""


def test_failure_detail_retry_after_and_too_large() -> None:
    busy = function_pb2.Failure(reason=function_pb2.Failure.REASON_FUNCTION_BUSY, retry_after_seconds=2)
    e = er.from_gateway("resource_exhausted", "busy", [_detail(busy)])
    assert isinstance(e, er.Busy) and e.retry_after == 2 and e.reason == "REASON_FUNCTION_BUSY"
    # the session queue sends no Failure detail, only Retry-After
    s = er.from_gateway("resource_exhausted", "session busy", [], "1")
    assert isinstance(s, er.Busy) and s.retry_after == 1
    big = function_pb2.Failure(reason=function_pb2.Failure.REASON_REQUEST_TOO_LARGE)
    t = er.from_gateway("resource_exhausted", "too large", [_detail(big)])
    assert isinstance(t, er.TooLarge) and t.status == 413 and not isinstance(t, er.Busy)
    down = function_pb2.Failure(reason=function_pb2.Failure.REASON_UNREACHABLE, retry_after_seconds=1)
    u = er.from_gateway("unavailable", "moving", [_detail(down)])
    assert isinstance(u, er.Unavailable) and u.retry_after == 1 and u.reason == "REASON_UNREACHABLE"


def test_connect_error_with_headers() -> None:
    from connectrpc.code import Code
    from connectrpc.errors import ConnectError

    ce = ConnectError(Code.RESOURCE_EXHAUSTED, "queue full",
                      [function_pb2.Failure(reason=function_pb2.Failure.REASON_GATEWAY_BUSY)])
    e = er.from_connect_error(ce, {"retry-after": "3"})
    assert isinstance(e, er.Busy) and e.retry_after == 3 and e.reason == "REASON_GATEWAY_BUSY"


def test_plain_route_and_kube_errors() -> None:
    e = er.from_http_json(404, json.dumps({"code": "not_found", "message": "no run"}).encode(), {})
    assert isinstance(e, er.NotFound) and e.message == "no run"
    e = er.from_http_json(429, b"<html>", {"retry-after": "5"})
    assert isinstance(e, er.Busy) and e.retry_after == 5
    k = er.from_kube_status(409, json.dumps({"reason": "AlreadyExists", "message": "runs \"x\" already exists"}), "create run")
    assert isinstance(k, er.AlreadyExists) and "create run" in str(k)
    assert isinstance(er.from_kube_status(409, json.dumps({"reason": "Conflict"}), "patch"), er.Conflict)
    assert isinstance(er.from_kube_status(422, "{}", "create"), er.InvalidArgument)
    assert isinstance(er.from_kube_status(403, None, "get"), er.PermissionDenied)
    assert isinstance(er.from_kube_status(401, None, "get"), er.Unauthenticated)
    assert isinstance(er.from_kube_status(503, b"down", "get"), er.Unavailable)
    wt = er.WaitTimeout("slow")
    assert isinstance(wt, TimeoutError) and isinstance(wt, er.KruntimesError)


# --- Run manifests ------------------------------------------------------------------------------


def test_task_manifest() -> None:
    m = spec.task_run("team", "bash", script="echo hi", env={"WHO": "you"}, timeout=30, retries=2,
                      ttl_seconds=60, labels={"a": "b"})
    assert m["apiVersion"] == "kruntimes.io/v1alpha1" and m["kind"] == "Run"
    assert m["metadata"]["generateName"] == "bash-" and m["metadata"]["namespace"] == "team"
    assert int(m["metadata"]["annotations"]["kruntimes.io/created-micros"]) > 1_600_000_000_000_000
    assert m["metadata"]["labels"] == {"a": "b"}
    s = m["spec"]
    assert s["mode"] == {"task": {}} and s["source"] == {"inline": "echo hi"}
    assert s["env"] == [{"name": "WHO", "value": "you"}]
    assert s["timeout"] == "30s" and s["retryPolicy"] == {"maxAttempts": 3} and s["ttlSecondsAfterFinished"] == 60
    e = spec.task_run("team", "bash", entrypoint="/x.sh", args=["a", "b"], name="fixed")
    assert e["metadata"]["name"] == "fixed" and e["spec"]["mode"]["task"] == {"entrypoint": "/x.sh", "args": ["a", "b"]}
    assert "source" not in e["spec"]


@pytest.mark.parametrize("kw,msg", [
    ({"script": "x", "args": ["a"]}, "standalone"),
    ({}, "nothing to run"),
    ({"script": "x", "name": "Bad_Name"}, "not a valid Run name"),
    ({"script": "x", "env": {"1X": "v"}}, "env name"),
    ({"script": "x", "timeout": "soon"}, "not a duration"),
    ({"script": "x", "retries": 10}, "retries"),
    ({"args": "echo hi"}, "list of strings"),
])
def test_task_manifest_refusals(kw: dict, msg: str) -> None:
    with pytest.raises(er.InvalidArgument, match=msg):
        spec.task_run("ns", "bash", **kw)


def test_function_and_session_manifests() -> None:
    f = spec.function_run("ns", "python", "def handler(r): return 1", handler="handler", concurrency=4,
                          idle_timeout="30m", invocation_timeout=1.5, max_request_bytes=4096)
    assert f["spec"]["mode"]["function"] == {"handler": "handler", "concurrency": 4, "idleTimeout": "30m",
                                             "invocationTimeout": "1500ms", "maxRequestBytes": 4096}
    assert f["metadata"]["generateName"] == "python-fn-"
    with pytest.raises(er.InvalidArgument, match="concurrency"):
        spec.function_run("ns", "python", "x", concurrency=65)
    with pytest.raises(er.InvalidArgument, match="source is empty"):
        spec.function_run("ns", "python", "")
    s = spec.session_run("ns", "bash", idle_timeout="15m", max_queued_operations=1, timeout="2h")
    assert s["spec"] == {"runtime": "bash", "mode": {"session": {"idleTimeout": "15m", "maxQueuedOperations": 1}},
                         "timeout": "2h"}
    assert s["metadata"]["generateName"] == "bash-session-"
    assert spec.termination_patch("Drain") == {"spec": {"termination": {"mode": "Drain"}}}


# --- logs ---------------------------------------------------------------------------------------


def _rec(**o: object) -> str:
    base = {"level": 30, "time": 1, "msg": "output", "run": "r", "runUID": "u1", "namespace": "ns",
            "attempt": 1, "stream": "stdout", "line": "hi"}
    base.update(o)
    return json.dumps(base)


def test_output_records() -> None:
    r = lg.parse_output_line(_rec())
    assert r == lg.OutputRecord("u1", 1, "stdout", "hi", "")
    assert lg.parse_output_line(_rec(invocation="inv-1")).call == "inv-1"  # type: ignore[union-attr]
    assert lg.parse_output_line(_rec(operation="op-7")).call == "op-7"  # type: ignore[union-attr]
    assert lg.parse_output_line(_rec(line='{"msg":"output"}')).line == '{"msg":"output"}'  # type: ignore[union-attr]
    for bad in (_rec(msg="run started"), "output: plain", '{"msg":"output",', _rec(stream="stdin"),
                _rec(attempt="1"), _rec(line=5), _rec(runUID=None), _rec(attempt=True)):
        assert lg.parse_output_line(bad) is None, bad


def test_audit_record() -> None:
    audit = json.dumps({"level": 30, "time": "t", "component": "runtimed", "pod": "p", "run": "s",
                        "runUID": "u1", "namespace": "ns", "attempt": 1, "audit": True,
                        "caller": "system:serviceaccount:team:agent", "op": "exec", "result": "ok",
                        "durationMs": 26.5, "operation": "op-1", "argv": ["echo", "hi"], "msg": "session operation"})
    r = lg.parse_output_line(audit)
    assert r is not None and r.audit and r.stream == "stderr" and r.call == "op-1"
    assert r.line == 'audit: exec by system:serviceaccount:team:agent: ok (26.5 ms) {"argv":["echo","hi"]}'
    assert lg.parse_output_line(audit.replace('"audit": true', '"audit": false')) is None


def test_log_filters_and_tails() -> None:
    o = lg.OutputRecord("u1", 2, "stdout", "", "inv-1")
    assert lg.matches(o, "u1") and not lg.matches(o, "u2")
    assert lg.matches(o, "u1", 2) and not lg.matches(o, "u1", 1)
    assert lg.matches(o, "u1", None, "inv-1") and not lg.matches(o, "u1", None, "inv-2")
    assert lg.tail_lines("a\nb\n") == ["a", "b"] and lg.tail_lines("a\n\nb") == ["a", "", "b"]
    assert lg.tail_lines(None) == [] and lg.tail_lines("") == []
    run = Run.from_dict({"metadata": {"name": "r", "creationTimestamp": "2026-12-03T06:00:00Z"},
                         "spec": {"runtime": "bash", "mode": {"task": {}}},
                         "status": {"phase": "Failed", "attempt": 2, "stdoutTail": "o1\no2\n", "stderrTail": "e\n"}})
    assert lg.since_creation(run) == "2026-12-03T05:59:59Z"
    t = lg.tails(run)
    assert [(x.stream, x.line, x.attempt, x.from_tail) for x in t] == [
        ("stdout", "o1", 2, True), ("stdout", "o2", 2, True), ("stderr", "e", 2, True)]
    assert lg.tails(run, call="inv-1") == []
    assert lg.caught_up(run, {"stdout": "o2", "stderr": "e"}) and not lg.caught_up(run, {"stdout": "o1", "stderr": "e"})
    with pytest.raises(er.InvalidArgument, match="no attempt 3"):
        lg.check_attempt(run, 3)


def test_line_splitter() -> None:
    s = LineSplitter()
    assert s.feed(b'{"a":') == []
    assert s.feed(b'1}\n{"b"') == ['{"a":1}']
    assert s.feed(b":2}\r\n\n") == ['{"b":2}', ""]
    assert s.feed("é".encode()[:1]) == [] and s.feed("é".encode()[1:] + b"\n") == ["é"]
    assert s.feed(b"tail") == [] and s.end() == ["tail"]


# --- models -------------------------------------------------------------------------------------


def test_run_and_result() -> None:
    run = Run.from_dict({"metadata": {"name": "t", "namespace": "ns", "uid": "u", "resourceVersion": "7"},
                         "spec": {"runtime": "bash", "mode": {"task": {}}},
                         "status": {"phase": "Failed", "reason": "NonZeroExit", "exitCode": 3, "attempt": 1,
                                    "outputs": {"k": "v"}, "stdoutTail": "x\n", "stderrTruncated": True}})
    assert (run.mode, run.phase, run.finished, run.ready) == ("task", "Failed", True, False)
    r = TaskResult.from_run(run)
    assert (r.exit_code, r.outputs, r.stdout_tail, r.stderr_truncated, r.succeeded) == (3, {"k": "v"}, "x\n", True, False)
    pending = Run.from_dict({"metadata": {"name": "s"}, "spec": {"mode": {"session": {}}}})
    assert (pending.mode, pending.phase, pending.attempt, pending.finished) == ("session", "Pending", 0, False)
    assert TaskResult.from_run(pending).exit_code is None


# --- gateway discovery (pure parts) -------------------------------------------------------------

SVC = {"metadata": {"name": "kruntimes-gateway", "annotations": {gw.CA_ANNOTATION: "kruntimes-gateway-ca"}},
       "spec": {"ports": [{"name": "https", "port": 443, "targetPort": "https"}, {"name": "metrics", "port": 9090}],
                "selector": {"app.kubernetes.io/name": "kruntimes-gateway", "app.kubernetes.io/instance": "r"}}}


def test_service_choice_and_facts() -> None:
    with pytest.raises(er.GatewayUnreachable, match="no gateway Service"):
        gw.pick_service({"items": []}, "kruntimes")
    with pytest.raises(er.GatewayUnreachable, match="2 gateway Services"):
        gw.pick_service({"items": [SVC, SVC]}, "kruntimes")
    assert gw.service_facts(SVC) == ("kruntimes-gateway", "https", "kruntimes-gateway-ca", 443)
    http = {"metadata": {"name": "g"}, "spec": {"ports": [{"name": "http", "port": 80}]}}
    assert gw.service_facts(http) == ("g", "http", None, 80)
    assert gw.pod_selector(SVC) == "app.kubernetes.io/name=kruntimes-gateway,app.kubernetes.io/instance=r"


def test_endpoints_from_slices_and_pods() -> None:
    slices = {"items": [{"ports": [{"name": "https", "port": 8443}], "endpoints": [
        {"addresses": ["10.0.0.1"], "conditions": {"ready": True}, "targetRef": {"kind": "Pod", "name": "gw-a"}},
        {"addresses": ["10.0.0.2"], "conditions": {"ready": False}},
        {"addresses": ["10.0.0.3"], "conditions": {"terminating": True}},
        {"addresses": ["fd00::4"]},
    ]}, {"ports": [{"name": "metrics", "port": 9090}], "endpoints": [{"addresses": ["10.0.0.9"]}]}]}
    eps = gw.endpoints_from_slices(slices, "https")
    assert [(e.address, e.port, e.pod) for e in eps] == [("10.0.0.1", 8443, "gw-a"), ("fd00::4", 8443, "")]
    assert eps[1].host_port == "[fd00::4]:8443"
    ready = [{"type": "Ready", "status": "True"}]
    pods = {"items": [
        {"metadata": {"name": "p1"}, "spec": {"containers": [{"ports": [{"name": "https", "containerPort": 8443}]}]},
         "status": {"podIP": "127.1.0.5", "conditions": ready}},
        {"metadata": {"name": "p2"}, "spec": {}, "status": {"podIP": "127.1.0.6", "conditions": []}},
        {"metadata": {"name": "p3", "deletionTimestamp": "x"}, "status": {"podIP": "127.1.0.7", "conditions": ready}},
    ]}
    assert [(e.address, e.port, e.pod) for e in gw.endpoints_from_pods(pods, SVC, "https")] == [("127.1.0.5", 8443, "p1")]


def test_targets_pin_the_service_name() -> None:
    d = gw.Discovered("team", "kruntimes-gateway", "https", "kruntimes-gateway.team.svc", "CA", [], 443)
    t = gw.target_for(d, "direct 10.0.0.1", "10.0.0.1:8443", None)
    assert t.base_url == "https://kruntimes-gateway.team.svc"
    assert t.dns_overrides == {"kruntimes-gateway.team.svc": ["10.0.0.1:8443"]}
    assert t.ca == b"CA" and not t.system_roots
    svc = gw.target_for(d, "service", None, "MINE")
    assert svc.dns_overrides == {} and svc.ca == b"MINE"
    d8 = gw.Discovered("team", "g", "http", "g.team.svc", None, [], 8080)
    assert gw.target_for(d8, "service", None, None).base_url == "http://g.team.svc:8080"
    u = gw.url_target("https://gw.example.com/", None, "CHART")
    assert (u.base_url, u.ca, u.system_roots, u.via) == ("https://gw.example.com", b"CHART", True, "url")
    with pytest.raises(er.ConfigError, match="http:// or https://"):
        gw.url_target("gw.example.com", None, None)
    with pytest.raises(er.ConfigError, match="via="):
        gw.check_via("ssh")


def test_first_dialable(unused_tcp_port: int | None = None) -> None:
    import socket

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen()
    port = srv.getsockname()[1]
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    dead = closed.getsockname()[1]
    closed.close()
    try:
        eps = [gw.Endpoint("127.0.0.1", dead), gw.Endpoint("127.0.0.1", port)]
        assert gw.first_dialable(eps, 1).port == port  # type: ignore[union-attr]
        assert gw.first_dialable([gw.Endpoint("127.0.0.1", dead)], 1) is None
        assert asyncio.run(gw.first_dialable_async(eps, 1)).port == port  # type: ignore[union-attr]
        assert asyncio.run(gw.first_dialable_async([], 1)) is None
    finally:
        srv.close()


# --- requests -----------------------------------------------------------------------------------


def test_chunks() -> None:
    assert list(cv.chunks(b"", 4)) == [(b"", True)]
    assert list(cv.chunks(b"abcdefghij", 4)) == [(b"abcd", False), (b"efgh", False), (b"ij", True)]
    assert list(cv.chunks(b"abcdefgh", 4)) == [(b"abcd", False), (b"efgh", True)]
    assert list(cv.chunks("é", 4)) == [("é".encode(), True)]
    assert list(cv.chunks(io.BytesIO(b"abcdefgh"), 4)) == [(b"abcd", False), (b"efgh", True)]
    assert list(cv.chunks(iter([b"ab", b"cdef", b"g"]), 4)) == [(b"abcd", False), (b"efg", True)]
    assert list(cv.chunks(iter([]), 4)) == [(b"", True)]


def test_invoke_and_exec_requests() -> None:
    assert cv.guess_content_type(b'{"a":1}') == "application/json"
    assert cv.guess_content_type(b"hello") == "application/octet-stream"
    assert cv.guess_content_type(b"") == "application/octet-stream"
    r = cv.invoke_request("ns", "fn", "héllo", None, {"X-Trace": "1", "Content-Type": "text/plain"})
    assert (r.namespace, r.run, r.body, r.content_type, dict(r.headers)) == ("ns", "fn", "héllo".encode(), "text/plain", {"x-trace": "1"})
    with pytest.raises(er.InvalidArgument, match="authorization"):
        cv.invoke_request("ns", "fn", b"", None, {"Authorization": "Bearer x"})
    e = cv.exec_request("ns", "s", ["ls", "-l"], {"A": 1}, "sub", 2.5, "in")  # type: ignore[dict-item]
    assert list(e.command.argv.args) == ["ls", "-l"] and e.timeout_ms == 2500 and e.stdin == b"in"
    assert dict(e.env) == {"A": "1"} and e.working_dir == "sub"
    assert cv.exec_request("ns", "s", "echo hi | wc", None, "", None, None).command.shell == "echo hi | wc"
    with pytest.raises(er.InvalidArgument):
        cv.command([])
    with pytest.raises(er.InvalidArgument):
        cv.write_mode("overwrite")


def test_exec_events_collect() -> None:
    from kruntimes.runtime.v1 import session_pb2 as rt

    evs = [session_pb2.ExecResponse(operation_id="op", started=rt.ExecStarted(pid=7)),
           session_pb2.ExecResponse(operation_id="op", output=rt.ExecOutput(stream="stdout", data=b"a")),
           session_pb2.ExecResponse(operation_id="op", output=rt.ExecOutput(stream="stderr", data=b"e")),
           session_pb2.ExecResponse(operation_id="op", output=rt.ExecOutput(stream="stdout", data=b"b")),
           session_pb2.ExecResponse(operation_id="op", exited=rt.ExecExited(reason=rt.EXIT_REASON_EXITED, exit_code=2))]
    col = cv.ExecCollector()
    kinds = []
    for ev in evs:
        e = cv.exec_event(ev)
        kinds.append(e.kind)
        col.add(e)
    assert kinds == ["started", "output", "output", "output", "exited"]
    res = col.result()
    assert (res.exit_code, res.stdout, res.stderr, res.reason, res.ok, res.operation_id) == (2, b"ab", b"e", "EXITED", False, "op")
    with pytest.raises(er.InternalError, match="without its exit"):
        cv.ExecCollector().result()


# --- client construction ------------------------------------------------------------------------


def _kubeconfig(tmp_path: object, ns: str | None = "team") -> str:
    ctx: dict = {"cluster": "c", "user": "u"}
    if ns:
        ctx["namespace"] = ns
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "main",
           "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
           "users": [{"name": "u", "user": {"token": "tok-123"}}, {"name": "cert", "user": {}}],
           "contexts": [{"name": "main", "context": ctx}, {"name": "other", "context": {"cluster": "c", "user": "cert"}}]}
    p = os.path.join(str(tmp_path), "kubeconfig")
    with open(p, "w") as f:
        json.dump(doc, f)  # JSON is YAML
    return p


def test_client_from_kubeconfig(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KRT_GATEWAY_NAMESPACE", raising=False)
    path = _kubeconfig(tmp_path)
    with kruntimes.Client.from_kubeconfig(path) as c:
        assert c.namespace == "team" and c._gateway_namespace == "kruntimes"
        assert c._auth() == {"authorization": "Bearer tok-123"}
    with kruntimes.Client.from_kubeconfig(path, context="other", gateway_namespace="gw") as c:
        assert c.namespace == "default" and c._gateway_namespace == "gw"
        with pytest.raises(er.ConfigError, match="client certificate"):
            c._auth()
    with kruntimes.Client.from_kubeconfig(path, context="other", token="given") as c:
        assert c._auth() == {"authorization": "Bearer given"}
    with pytest.raises(er.ConfigError, match="no context 'nope'"):
        kruntimes.Client.from_kubeconfig(path, context="nope")
    with pytest.raises(er.ConfigError, match="via="):
        kruntimes.Client.from_kubeconfig(path, via="tunnel")
    monkeypatch.setenv("KRT_GATEWAY_NAMESPACE", "from-env")
    monkeypatch.setenv("KUBECONFIG", path)
    with kruntimes.Client(namespace="mine") as c:  # not in a pod: the kubeconfig
        assert c.namespace == "mine" and c._gateway_namespace == "from-env" and not c._in_cluster


def test_async_client_construction(tmp_path: object) -> None:
    path = _kubeconfig(tmp_path)

    async def main() -> None:
        async with kruntimes.AsyncClient.from_kubeconfig(path) as c:
            assert c.namespace == "team"
            assert await c._auth() == {"authorization": "Bearer tok-123"}

    asyncio.run(main())


def test_in_cluster_needs_a_token(tmp_path: object) -> None:
    with pytest.raises(er.ConfigError, match="ServiceAccount token"):
        kruntimes.Client.in_cluster(service_account_dir=str(tmp_path))
    with pytest.raises(er.ConfigError, match="ServiceAccount token"):
        kruntimes.AsyncClient.in_cluster(service_account_dir=str(tmp_path))


def test_port_forward_failure_says_why(tmp_path: object) -> None:
    fake = os.path.join(str(tmp_path), "kubectl")
    with open(fake, "w") as f:
        f.write(textwrap.dedent(f"""\
            #!{sys.executable}
            import sys
            print("error: pods/portforward is forbidden", file=sys.stderr)
            sys.exit(1)
            """))
    os.chmod(fake, os.stat(fake).st_mode | stat.S_IEXEC)

    class K:
        class source:
            kubeconfig = "/k"
            context = None

    with pytest.raises(er.GatewayUnreachable, match="forbidden.*pods/portforward"):
        gw.PortForward.open(fake, K(), "ns", "gw-0", 8443, timeout=5)  # type: ignore[arg-type]
    with pytest.raises(er.GatewayUnreachable, match="forbidden"):
        asyncio.run(gw.AsyncPortForward.open(fake, K(), "ns", "gw-0", 8443, timeout=5))  # type: ignore[arg-type]
    with pytest.raises(er.GatewayUnreachable, match="cannot run"):
        gw.PortForward.open(os.path.join(str(tmp_path), "missing"), K(), "ns", "gw-0", 8443)  # type: ignore[arg-type]
