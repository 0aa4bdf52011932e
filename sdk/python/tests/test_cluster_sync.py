"""The synchronous Client against the chart's gateway on the local cluster (skipped without
KRUNTIMES_TEST_KUBECONFIG; see conftest.py)."""

from __future__ import annotations

import gc
import io
import json
import os
import threading
import time
from typing import Any, Iterator

import pytest

import kruntimes
from kruntimes import Client

from cluster import BASH_FN, PY_FN, gateway_pod_address, kubectl_shim, service_account_dir, token_without_grants


@pytest.fixture(scope="module")
def client(env: Any) -> Iterator[Client]:
    with Client.from_kubeconfig(env.kubeconfig, gateway_namespace=env.gateway_namespace) as c:
        yield c


@pytest.fixture(scope="module")
def py_fn(client: Client) -> Iterator[str]:
    run = client.runs.create_function("python", PY_FN, concurrency=2, wait=True, wait_timeout=90)
    yield run.name
    client.runs.delete(run.name, missing_ok=True)


@pytest.fixture(scope="module")
def bash_fn(client: Client) -> Iterator[str]:
    run = client.runs.create_function("bash", BASH_FN, wait=True, wait_timeout=90)
    yield run.name
    client.runs.delete(run.name, missing_ok=True)


def test_task_result_outputs_tails_and_logs(client: Client, env: Any, unique: str) -> None:
    assert client.namespace == env.namespace
    run = client.runs.create_task(
        "bash", 'echo "hello $WHO"; echo "greeting=hello $WHO" >> "$KRUNTIME_OUTPUTS"; echo oops >&2',
        env={"WHO": "python"}, labels={"suite": unique})
    assert run.phase == "Pending" and run.mode == "task" and run.name.startswith("bash-")
    res = client.runs.result(run.name, timeout=60)
    assert (res.phase, res.reason, res.exit_code, res.succeeded) == ("Succeeded", "Completed", 0, True)
    assert res.outputs == {"greeting": "hello python"}
    assert (res.stdout_tail, res.stderr_tail) == ("hello python\n", "oops\n")
    lines = [(x.stream, x.line, x.attempt) for x in client.runs.logs(run.name)]
    # stdout and stderr are separate pipes: their relative order is not kept
    assert sorted(lines) == [("stderr", "oops", 1), ("stdout", "hello python", 1)]
    assert [r.name for r in client.runs.list(label_selector=f"suite={unique}")] == [run.name]
    with pytest.raises(kruntimes.InvalidArgument, match="no attempt 2"):
        list(client.runs.logs(run.name, attempt=2))


def test_task_follow_logs_until_it_ends(client: Client) -> None:
    run = client.runs.create_task("bash", "for i in 1 2 3 4; do echo line $i; sleep 0.2; done; echo done >&2")
    seen = [(x.stream, x.line) for x in client.runs.logs(run.name, follow=True, timeout=60)]
    assert seen == [("stdout", "line 1"), ("stdout", "line 2"), ("stdout", "line 3"), ("stdout", "line 4"),
                    ("stderr", "done")]
    assert client.runs.get(run.name).phase == "Succeeded"


def test_task_failure_wait_timeout_cancel_delete(client: Client) -> None:
    failing = client.runs.create_task("bash", args=["echo before", "exit 3"])
    slow = client.runs.create_task("bash", "sleep 30", timeout="60s")
    res = client.runs.result(failing.name, timeout=60)
    assert (res.phase, res.reason, res.exit_code) == ("Failed", "NonZeroExit", 3)
    with pytest.raises(kruntimes.WaitTimeout) as wt:
        client.runs.wait(slow.name, timeout=1)
    assert wt.value.run is not None and not wt.value.run.finished
    client.runs.cancel(slow.name)
    done = client.runs.wait(slow.name, timeout=60)
    assert (done.phase, done.reason) == ("Cancelled", "Cancelled")
    assert client.runs.cancel(slow.name).phase == "Cancelled"  # already ended: left alone
    client.runs.delete(failing.name)
    with pytest.raises(kruntimes.NotFound):
        client.runs.get(failing.name)
    client.runs.delete(failing.name, missing_ok=True)
    with pytest.raises(kruntimes.InvalidArgument, match="is a task Run"):
        client.sessions.open(slow.name)
    with pytest.raises(kruntimes.AlreadyExists):
        client.runs.create_task("bash", "true", name=slow.name)


def test_python_function(client: Client, py_fn: str) -> None:
    out = client.functions.invoke_json(py_fn, {"name": "sdk"})
    assert out["hello"] == "sdk" and out["type"] == "application/json"
    raw = client.functions.invoke(py_fn, b"", timeout=10)
    assert raw.status == 200 and raw.json()["hello"] == "world" and raw.invocation_id
    assert raw.content_type.startswith("application/json")
    with pytest.raises(kruntimes.HandlerError) as he:
        client.functions.invoke(py_fn, '{"name": "x"}', headers={"X-Fail": "yes"})
    e = he.value
    assert (e.type, e.handler_message, e.code, e.status) == ("ValueError", "asked to fail", "unknown", 500)
    assert "Traceback" in e.traceback and e.invocation_id
    # the handler's print is in the function's logs, keyed by the invocation
    ok = client.functions.invoke(py_fn, json.dumps({"name": "logged"}))
    for _ in range(50):
        mine = [x.line for x in client.runs.logs(py_fn, call=ok.invocation_id)]
        if mine:
            break
        time.sleep(0.1)
    assert mine == ["handling logged"]


def test_bash_function(client: Client, bash_fn: str) -> None:
    res = client.functions.invoke(bash_fn, "hi")
    assert res.text == "bash got 2 bytes: hi\n" and res.content_type
    with pytest.raises(kruntimes.HandlerError) as he:
        client.functions.invoke(bash_fn, "fail")
    assert (he.value.type, he.value.exit_code) == ("NonZeroExit", 1)


def test_gateway_errors(client: Client, env: Any, admin: Any, py_fn: str) -> None:
    with pytest.raises(kruntimes.NotFound, match="does not exist"):
        client.functions.invoke("no-such-run", b"x")
    task = client.runs.create_task("bash", "true")
    client.runs.wait(task.name, timeout=60)
    with pytest.raises(kruntimes.NotReady) as nr:
        client.functions.invoke(task.name, b"x")
    assert (nr.value.phase, nr.value.mode, nr.value.status) == ("Succeeded", "task", 409)
    with pytest.raises(kruntimes.NotReady) as nr2:
        kruntimes.Session(client, client.runs.get(py_fn)).stat("")
    assert nr2.value.mode == "function"
    nobody = token_without_grants(admin, env.namespace)
    with Client.from_kubeconfig(env.kubeconfig, gateway_namespace=env.gateway_namespace, token=nobody) as other:
        with pytest.raises(kruntimes.PermissionDenied, match="runs/invoke"):
            other.functions.invoke(py_fn, b"{}")
    with Client.from_kubeconfig(env.kubeconfig, gateway_namespace=env.gateway_namespace, token="not-a-token") as bad:
        with pytest.raises(kruntimes.Unauthenticated):
            bad.functions.invoke(py_fn, b"{}")
    # discovery reads with the user's rights, and says which one is missing
    with pytest.raises(kruntimes.PermissionDenied, match="may not list services in namespace 'kube-system'"):
        with Client.from_kubeconfig(env.kubeconfig, gateway_namespace="kube-system") as c:
            c.functions.invoke(py_fn, b"{}")


def test_session_commands_files_and_close(client: Client, env: Any, admin: Any) -> None:
    with client.sessions.create("bash", idle_timeout="5m") as s:
        assert s.run.ready and s.run.mode == "session"
        r = s.exec("echo out; echo err >&2; exit 3")
        assert (r.exit_code, r.stdout, r.stderr, r.reason, r.ok) == (3, b"out\n", b"err\n", "EXITED", False)
        with pytest.raises(kruntimes.KruntimesError, match="exited 3: err"):
            s.exec(["bash", "-c", "echo err >&2; exit 3"], check=True)
        r = s.exec("cat; echo $GREETING; pwd", env={"GREETING": "hi"}, stdin="from stdin\n")
        assert r.stdout_text.splitlines()[:2] == ["from stdin", "hi"]
        events = list(s.exec_stream(["bash", "-c", "echo one; sleep 0.2; echo two"]))
        assert [e.kind for e in events][0] == "started" and events[-1].kind == "exited"
        assert b"".join(e.data for e in events if e.kind == "output") == b"one\ntwo\n"
        t = s.exec("sleep 5", timeout=0.5)
        assert t.reason == "TIMEOUT" and t.signal
        # files
        info = s.write_file("in/data.txt", "hello file\n", parents=True)
        assert (info.path, info.size, info.type) == ("in/data.txt", 11, "file")
        assert s.read_file("in/data.txt") == b"hello file\n" and s.read_text("in/data.txt") == "hello file\n"
        assert s.read_file("in/data.txt", offset=6, length=4) == b"file"
        big = os.urandom(300_000)
        assert s.write_file("big.bin", io.BytesIO(big), chunk_size=64 * 1024).size == len(big)
        assert b"".join(s.read_file_stream("big.bin")) == big
        s.write_file("in/data.txt", iter([b"more ", b"lines\n"]), mode="append")
        assert s.exec("cat in/data.txt").stdout == b"hello file\nmore lines\n"
        with pytest.raises(kruntimes.AlreadyExists):
            s.write_file("in/data.txt", b"x", mode="create")
        s.make_dir("many")
        for i in range(12):
            s.write_file(f"many/f{i:02}", b"")
        names = [e.name for e in s.list_files("many", page_size=5)]
        assert names == [f"f{i:02}" for i in range(12)]
        assert s.stat("many").is_dir and s.exists("big.bin") and not s.exists("nope")
        assert s.rename("big.bin", "in/big.bin").path == "in/big.bin"
        assert s.remove("many", recursive=True) and not s.exists("many")
        with pytest.raises(kruntimes.NotFound):
            s.read_file("missing.txt")
        with pytest.raises(kruntimes.NotFound):
            list(s.list_files("missing-dir"))
        with pytest.raises(kruntimes.PermissionDenied):
            s.stat("../outside")
        # the session's logs: output and audit lines, per operation
        first = [x for x in s.logs() if x.line == "out"][0]
        mine = [x.line for x in s.logs(call=first.call)]
        assert mine[:2] == ["out", "err"] and mine[2].startswith("audit: exec by system:serviceaccount:")
        # another user without runs/session may not drive it
        with Client.from_kubeconfig(env.kubeconfig, gateway_namespace=env.gateway_namespace,
                                    token=token_without_grants(admin, env.namespace)) as other:
            with pytest.raises(kruntimes.PermissionDenied, match="runs/session"):
                other.sessions.open(s.name).exec("true")
    ended = client.runs.wait(s.name, timeout=60)
    assert (ended.phase, ended.reason) == ("Succeeded", "Drained")
    with pytest.raises(kruntimes.NotReady) as nr:
        s.exec("true")
    assert nr.value.phase == "Succeeded"


def test_session_busy_and_cancel(client: Client) -> None:
    s = client.sessions.create("bash", max_queued_operations=1)
    try:
        running = s.exec_stream("sleep 4")
        assert next(running).kind == "started"
        # Behind the running command the queue holds one mutation: of three sent at once, at
        # least two are refused at once.
        outcome: list[Any] = []

        def one() -> None:
            try:
                outcome.append(s.exec("true"))
            except kruntimes.KruntimesError as e:  # Busy, or cancelled with the session below
                outcome.append(e)

        threads = [threading.Thread(target=one, daemon=True) for _ in range(3)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and sum(isinstance(o, kruntimes.Busy) for o in outcome) < 2:
            time.sleep(0.05)
        busy = [o for o in outcome if isinstance(o, kruntimes.Busy)]
        assert len(busy) >= 2, outcome
        assert busy[0].retry_after >= 1 and busy[0].code == "resource_exhausted" and busy[0].status == 429
    finally:
        s.cancel(wait=True, timeout=60)
    assert s.run.phase == "Cancelled"
    for t in threads:
        t.join(10)
    assert len(outcome) == 3
    with pytest.raises(kruntimes.InvalidArgument, match="only sessions drain"):
        client.runs._terminate(client.namespace, client.runs.create_task("bash", "true").name, "Drain")


def test_port_forward_through_kubectl(env: Any, admin: Any, py_fn: str, tmp_path: Any,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    shim = kubectl_shim(str(tmp_path))
    args_file = str(tmp_path / "args.json")
    monkeypatch.setenv("SHIM_ARGS_FILE", args_file)
    monkeypatch.setenv("FORWARD_TO", gateway_pod_address(admin, env.gateway_namespace))
    c = Client.from_kubeconfig(env.kubeconfig, gateway_namespace=env.gateway_namespace, via="port-forward",
                               kubectl=shim)
    try:
        info = c.gateway()
        assert info.via.startswith("port-forward ") and info.address.startswith("127.0.0.1:")
        assert info.base_url == f"https://sdk-kruntimes-gateway.{env.gateway_namespace}.svc"
        assert c.functions.invoke_json(py_fn, {"name": "forwarded"})["hello"] == "forwarded"
        with open(args_file) as f:
            args = json.load(f)
        pod = info.via.split(" ", 1)[1]
        assert args == ["port-forward", "-n", env.gateway_namespace, f"pod/{pod}", ":8443", "--address",
                        "127.0.0.1", "--kubeconfig", env.kubeconfig]
        proc = c._gw.target.close.__self__.proc  # type: ignore[union-attr]
        assert proc.poll() is None
    finally:
        c.close()
    assert proc.poll() is not None  # the client stopped kubectl
    # A client dropped without close() stops its kubectl too.
    dropped = Client.from_kubeconfig(env.kubeconfig, gateway_namespace=env.gateway_namespace, via="port-forward",
                                     kubectl=shim)
    dropped.gateway()
    orphan = dropped._gw.target.close.__self__.proc  # type: ignore[union-attr]
    del dropped
    gc.collect()
    orphan.wait(10)


def test_gateway_url_and_direct(env: Any, admin: Any, py_fn: str, tmp_path: Any) -> None:
    with Client.from_kubeconfig(env.kubeconfig, gateway_namespace=env.gateway_namespace, via="direct") as c:
        info = c.gateway()
        assert info.via.startswith("direct ") and info.address.endswith(":8443")
        assert c.functions.invoke_json(py_fn, {"name": "direct"})["hello"] == "direct"
    # A URL: the chart's certificate is valid for 127.0.0.1, reached here through the stand-in.
    import subprocess

    shim = kubectl_shim(str(tmp_path))
    proc = subprocess.Popen([shim, "port-forward", ":8443"], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "SHIM_ARGS_FILE": str(tmp_path / "a.json"),
                                 "FORWARD_TO": gateway_pod_address(admin, env.gateway_namespace)})
    try:
        port = proc.stdout.readline().split("127.0.0.1:")[1].split(" ")[0]  # type: ignore[union-attr]
        with Client.from_kubeconfig(env.kubeconfig, gateway_namespace=env.gateway_namespace,
                                    gateway_url=f"https://127.0.0.1:{port}") as c:
            assert c.gateway().via == "url"
            assert c.functions.invoke_json(py_fn, {"name": "url"})["hello"] == "url"
    finally:
        proc.kill()
        proc.wait()


def test_in_cluster(env: Any, py_fn: str, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    sa, host, port = service_account_dir(env.kubeconfig, str(tmp_path / "sa"), env.namespace)
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", host)
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", port)
    # The Service's DNS name needs cluster DNS (there is none here): check the target, then dial a pod.
    with Client.in_cluster(service_account_dir=sa, gateway_namespace=env.gateway_namespace) as c:
        info = c.gateway()
        assert (info.via, info.address) == ("service", "")
        assert info.base_url == f"https://sdk-kruntimes-gateway.{env.gateway_namespace}.svc"
    with Client.in_cluster(service_account_dir=sa, gateway_namespace=env.gateway_namespace, via="direct") as c:
        assert c.namespace == env.namespace
        assert py_fn in [r.name for r in c.runs.list()]
        assert c.functions.invoke_json(py_fn, {"name": "pod"})["hello"] == "pod"
