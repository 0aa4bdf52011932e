"""Fixtures of the SDK's tests. Unit tests need nothing; the cluster tests (test_cluster_*.py)
run only with KRUNTIMES_TEST_KUBECONFIG set — test/e2e/sdk-python.test.ts sets it, with the
other KRUNTIMES_TEST_* variables of test/e2e/sdk-support.ts — and are skipped otherwise."""

from __future__ import annotations

import os
import uuid
from typing import Any, Iterator

import pytest

CLUSTER_VARS = ("KRUNTIMES_TEST_KUBECONFIG", "KRUNTIMES_TEST_NAMESPACE", "KRUNTIMES_TEST_GATEWAY_NAMESPACE",
                "KRUNTIMES_TEST_ADMIN_KUBECONFIG")


class Env:
    """The cluster the harness prepared: a namespace with the chart, and the `sdk` user."""

    def __init__(self) -> None:
        self.kubeconfig = os.environ["KRUNTIMES_TEST_KUBECONFIG"]
        self.namespace = os.environ["KRUNTIMES_TEST_NAMESPACE"]
        self.gateway_namespace = os.environ["KRUNTIMES_TEST_GATEWAY_NAMESPACE"]
        self.admin_kubeconfig = os.environ["KRUNTIMES_TEST_ADMIN_KUBECONFIG"]

    def admin(self) -> Any:
        from kubernetes import config

        return config.new_client_from_config(config_file=self.admin_kubeconfig)


@pytest.fixture(scope="session")
def env() -> Env:
    if not os.environ.get("KRUNTIMES_TEST_KUBECONFIG"):
        pytest.skip("cluster tests need KRUNTIMES_TEST_KUBECONFIG (run test/e2e/sdk-python.test.ts)")
    missing = [v for v in CLUSTER_VARS if not os.environ.get(v)]
    if missing:
        raise RuntimeError(f"KRUNTIMES_TEST_KUBECONFIG is set but {', '.join(missing)} is not")
    return Env()


@pytest.fixture(scope="session")
def admin(env: Env) -> Iterator[Any]:
    api = env.admin()
    yield api
    api.close()


@pytest.fixture(scope="session", autouse=True)
def _bash_pool(request: pytest.FixtureRequest) -> None:
    """Sessions hold a bash pod alone and spend it; a few warm pods keep the tests from waiting
    for replacements (the `sdk` user may not scale Runtimes, the admin may)."""
    if not os.environ.get("KRUNTIMES_TEST_KUBECONFIG"):
        return
    e = Env()
    from kubernetes import client

    api = e.admin()
    try:
        client.CustomObjectsApi(api).patch_namespaced_custom_object(
            "kruntimes.io", "v1alpha1", e.namespace, "runtimes", "bash", {"spec": {"replicas": 4}})
    finally:
        api.close()


@pytest.fixture()
def unique() -> str:
    return uuid.uuid4().hex[:6]
