"""The editor's devices on a Ray cluster, through the real language server: with the `mlirtext.cluster`
setting, the device list has the device a worker node advertises (`mlirtext worker --devices
local-sync`) beside the local ones, and Run Function on it runs there with the right outputs; a
cluster that is not there is a one-line error, soon, in the list and in the run; a cancel ends the
process that joined the cluster, and the next request starts another, as it does after that process died."""
from __future__ import annotations

import multiprocessing
import socket
import sys
import threading
import time

import pytest
import pytest_lsp
from lsprotocol import types as T
from pytest_lsp import ClientServerConfig, LanguageClient

from mlirtext.analysis.cluster_driver import ClusterDriver, ClusterRunError
from tests import ray_cluster
from tests.lsp_support import open_and_wait

pytest.importorskip("ray", reason="the cluster extra is not installed (pip install 'mlirtext[cluster]')")
on_the_client_loop = pytest.mark.asyncio(loop_scope="module")

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "mlirtext", "lsp"], server_env=ray_cluster.ENV)
SUBTRACT = """\
func.func @sub(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %y = stablehlo.subtract %a, %b : tensor<4xf32>
  return %y : tensor<4xf32>
}
"""
URI = "file:///tmp/lsp_cluster_sub.mlir"


@pytest.fixture(scope="module")
def cluster():
    yield from ray_cluster.cluster(plain_node=False)


@pytest_lsp.fixture(scope="module", config=SERVER)
async def client(lsp_client: LanguageClient, cluster):
    await lsp_client.initialize_session(T.InitializeParams(
        capabilities=T.ClientCapabilities(window=T.WindowClientCapabilities(work_done_progress=True)),
        initialization_options={"cluster": cluster["address"]}))
    await open_and_wait(lsp_client, URI, SUBTRACT)
    yield
    await lsp_client.shutdown_session()


async def command(client, name: str, *arguments):
    return await client.workspace_execute_command_async(T.ExecuteCommandParams(command=name, arguments=list(arguments)))


def set_cluster(client, address: str) -> None:
    client.workspace_did_change_configuration(T.DidChangeConfigurationParams(settings={"mlirtext": {"cluster": address}}))


@on_the_client_loop
async def test_the_device_list_has_the_cluster_device_and_a_run_lands_on_its_node(client, cluster):
    listed = await command(client, "mlirtext.devices")
    assert listed["error"] is None and listed["cluster"] == cluster["address"], listed
    pinned = f"cluster:local-sync@{cluster['device_id']}"   # (one node: its entry, no 'any node' one)
    assert [(d["id"], d["where"]) for d in listed["devices"]] == [
        ("reference", "local"), ("local-sync", "local"), ("local-task", "local"), (pinned, "cluster")]
    remote = listed["devices"][-1]
    assert remote["label"] == f"local-sync on {socket.gethostname()}"
    assert remote["node"] == {"node_id": cluster["device_id"], "hostname": socket.gethostname()}
    result = await command(client, "mlirtext.run", URI, "sub", ["4xf32=5 6 7 8", "4xf32=1 1 1 1"], 0, pinned)
    assert result.get("error") is None, result
    assert result["outputs"] == ["4xf32=4 5 6 7"] and result["device"] == pinned
    assert result["node"]["node_id"] == cluster["device_id"] and result["calls"] == 1
    assert result["seconds"] > 0 and result["compile_seconds"] > 0 and "one call on " in result["timing"]
    again = await command(client, "mlirtext.run", URI, "sub", ["4xf32=1 2 3 4", "4xf32=4 3 2 1"], 0,
                          "cluster:local-sync")   # (the module file is kept: no compile this time)
    assert again["outputs"] == ["4xf32=-3 -1 1 3"] and again["compile_seconds"] is None, again


@on_the_client_loop
async def test_a_device_no_node_offers_is_a_one_line_error(client, cluster):
    result = await command(client, "mlirtext.run", URI, "sub", None, 0, "cluster:vulkan")
    assert result == {"error": f"no node of the cluster at {cluster['address']} offers device 'vulkan' (offered: "
                               "local-sync; start one with `mlirtext worker --devices vulkan`)"}
    gone = await command(client, "mlirtext.run", URI, "sub", None, 0, "cluster:local-sync@0123abcd")
    assert gone["error"].startswith("no live node of the Ray cluster is '0123abcd' (nodes: "), gone


@on_the_client_loop
async def test_an_unreachable_cluster_is_a_one_line_error_soon(client, cluster):
    gone = f"127.0.0.1:{ray_cluster.free_port()}"
    set_cluster(client, gone)
    try:
        started = time.monotonic()
        listed = await command(client, "mlirtext.devices")
        assert [d["id"] for d in listed["devices"]] == ["reference", "local-sync", "local-task"]
        assert listed["error"] == f"cannot reach the Ray cluster at {gone}: Connection refused", listed
        result = await command(client, "mlirtext.run", URI, "sub", None, 0, "cluster:local-sync")
        assert result == {"error": f"cannot reach the Ray cluster at {gone}: Connection refused"}
        assert time.monotonic() - started < 30
    finally:
        set_cluster(client, cluster["address"])
    again = await command(client, "mlirtext.devices")   # (and back: the setting's cluster is joined again)
    assert again["error"] is None and again["devices"][-1]["id"] == f"cluster:local-sync@{cluster['device_id']}", again


@on_the_client_loop
async def test_without_the_setting_only_local_devices_and_a_cluster_device_says_what_to_set(client, cluster):
    set_cluster(client, "")
    try:
        listed = await command(client, "mlirtext.devices")
        assert listed == {"devices": listed["devices"], "cluster": None, "error": None}
        assert [d["where"] for d in listed["devices"]] == ["local"] * 3
        result = await command(client, "mlirtext.run", URI, "sub", None, 0, "cluster:local-sync")
        assert result == {"error": "device 'cluster:local-sync' is on a Ray cluster: set mlirtext.cluster to its "
                                   "HOST:PORT"}
    finally:
        set_cluster(client, cluster["address"])


def test_a_cancel_ends_the_process_that_joined_and_the_next_request_starts_another(cluster):
    """(the driver alone: the server's Run Function cancel sets this event)"""
    driver = ClusterDriver()
    driver.address = cluster["address"]
    cancelled = threading.Event()
    cancelled.set()   # (before the child has even joined: the request cannot be answered first)
    try:
        with pytest.raises(ClusterRunError, match="^cancelled$"):
            driver.call("devices", cluster["address"], cancelled=cancelled)
        nodes = driver.call("devices", cluster["address"])
        assert [n["node_id"] for n in nodes["local-sync"]] == [cluster["device_id"]]
    finally:
        driver.close()


def test_a_process_that_joined_and_died_is_a_one_line_error_and_the_next_request_starts_another(cluster):
    """(as when Ray ends it, about 60 s after the cluster's head went away)"""
    driver = ClusterDriver()
    driver.address = cluster["address"]

    def kill_the_child():
        while not (children := [p for p in multiprocessing.active_children() if p.name == "mlirtext-cluster"]):
            time.sleep(0.01)
        children[0].kill()
    killer = threading.Thread(target=kill_the_child)
    killer.start()
    try:
        with pytest.raises(ClusterRunError) as lost:   # (the child is killed while it joins)
            driver.call("devices", cluster["address"])
        assert str(lost.value) == (f"lost the connection to the Ray cluster at {cluster['address']} (the process "
                                   "that joined it ended)")
        assert "local-sync" in driver.call("devices", cluster["address"])
    finally:
        killer.join()
        driver.close()
