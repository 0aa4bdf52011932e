"""The asyncio AsyncClient against the chart's gateway on the local cluster (skipped without
KRUNTIMES_TEST_KUBECONFIG; see conftest.py)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

import kruntimes
from kruntimes import AsyncClient

from cluster import PY_FN, gateway_pod_address, kubectl_shim, token_without_grants


def _client(env: Any, **kw: Any) -> AsyncClient:
    return AsyncClient.from_kubeconfig(env.kubeconfig, gateway_namespace=env.gateway_namespace, **kw)


async def test_task_follow_result_and_cancel(env: Any) -> None:
    async with _client(env) as c:
        run = await c.runs.create_task("python", "import time\nfor i in range(3):\n    print('tick', i, flush=True)\n    time.sleep(0.2)\nopen(__import__('os').environ['KRUNTIME_OUTPUTS'], 'a').write('n=3\\n')\n")
        lines = [x.line async for x in c.runs.logs(run.name, follow=True, timeout=60)]
        assert lines == ["tick 0", "tick 1", "tick 2"]
        res = await c.runs.result(run.name, timeout=30)
        assert (res.phase, res.outputs) == ("Succeeded", {"n": "3"})
        assert [x.line async for x in c.runs.logs(run.name)] == lines
        slow = await c.runs.create_task("bash", "sleep 30")
        with pytest.raises(kruntimes.WaitTimeout):
            await c.runs.wait(slow.name, timeout=1)
        await c.runs.cancel(slow.name)
        assert (await c.runs.wait(slow.name, timeout=60)).phase == "Cancelled"
        await c.runs.delete(slow.name)
        with pytest.raises(kruntimes.NotFound):
            await c.runs.get(slow.name)


async def test_function_invoke_and_errors(env: Any, admin: Any) -> None:
    async with _client(env) as c:
        fn = await c.runs.create_function("python", PY_FN, wait=True, wait_timeout=90)
        try:
            assert (await c.functions.invoke_json(fn.name, {"name": "async"}))["hello"] == "async"
            many = await asyncio.gather(*(c.functions.invoke_json(fn.name, {"name": str(i)}) for i in range(8)))
            assert sorted(int(m["hello"]) for m in many) == list(range(8))
            with pytest.raises(kruntimes.HandlerError) as he:
                await c.functions.invoke(fn.name, b"{}", headers={"x-fail": "yes"})
            assert he.value.type == "ValueError"
            with pytest.raises(kruntimes.NotFound):
                await c.functions.invoke("no-such-run")
            async with _client(env, token=token_without_grants(admin, env.namespace)) as other:
                with pytest.raises(kruntimes.PermissionDenied):
                    await other.functions.invoke(fn.name, b"{}")
        finally:
            await c.runs.cancel(fn.name)


async def test_session(env: Any) -> None:
    async with _client(env) as c:
        async with await c.sessions.create("bash") as s:
            r = await s.exec("echo hi; echo err >&2; exit 4")
            assert (r.exit_code, r.stdout, r.stderr) == (4, b"hi\n", b"err\n")
            kinds = [e.kind async for e in s.exec_stream(["echo", "streamed"])]
            assert kinds[0] == "started" and kinds[-1] == "exited"

            async def parts():
                for p in (b"a" * 70_000, b"b" * 70_000):
                    yield p

            info = await s.write_file("up/parts.bin", parts(), parents=True, chunk_size=50_000)
            assert info.size == 140_000
            assert await s.read_file("up/parts.bin") == b"a" * 70_000 + b"b" * 70_000
            for i in range(7):
                await s.write_file(f"up/n{i}", str(i))
            names = [e.name async for e in s.list_files("up", page_size=3)]
            assert names == [f"n{i}" for i in range(7)] + ["parts.bin"]
            assert (await s.stat("up/n3")).size == 1
            assert await s.remove("up/n3") and not await s.exists("up/n3")
            with pytest.raises(kruntimes.NotFound):
                await s.read_file("nope")
        assert (await c.runs.wait(s.name, timeout=60)).phase == "Succeeded"
        with pytest.raises(kruntimes.NotReady):
            await s.exec("true")


async def test_port_forward(env: Any, admin: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHIM_ARGS_FILE", str(tmp_path / "args.json"))
    monkeypatch.setenv("FORWARD_TO", gateway_pod_address(admin, env.gateway_namespace))
    c = _client(env, via="port-forward", kubectl=kubectl_shim(str(tmp_path)))
    async with c:
        info = await c.gateway()
        assert info.via.startswith("port-forward ")
        fn = await c.runs.create_function("bash", "handler() { cat; }\n", wait=True, wait_timeout=90)
        try:
            assert (await c.functions.invoke(fn.name, "echoed")).text == "echoed"
        finally:
            await c.runs.cancel(fn.name)
        proc = c._gw.target.close.__self__.proc  # type: ignore[union-attr]
        assert proc.returncode is None
    assert proc.returncode is not None
    assert json.loads((tmp_path / "args.json").read_text())[0] == "port-forward"
