"""What one port-mapping attempt costs against the fake routers on loopback, on the
real clock: ``python -m tests.portmap_timing [RUNS]`` prints the median and the 90th
percentile, in milliseconds, of a mapping and of its delete for each method
(docs/benchmarks.md quotes them).  Loopback only, as the tests."""

from __future__ import annotations

import secrets
import statistics
import sys
from collections.abc import Callable

import trio

from p2pcards.net.portmap import PortmapConfig, PortMapper
from tests.portmap_fakes import FakeIgd, FakeUdp, natpmp_device, pcp_answer

PORT = 4545
V1 = "urn:schemas-upnp-org:service:WANIPConnection:1"
V2 = "urn:schemas-upnp-org:service:WANIPConnection:2"


def cases(udp: dict[str, FakeUdp], igd: dict[str, FakeIgd]
          ) -> dict[str, Callable[[], PortmapConfig]]:
    def gateway(name: str, methods: tuple[str, ...]) -> Callable[[], PortmapConfig]:
        return lambda: PortmapConfig(gateway="127.0.0.1", pcp_port=udp[name].port,
                                     methods=methods, random=secrets.token_bytes)

    def device(name: str) -> Callable[[], PortmapConfig]:
        return lambda: PortmapConfig(gateway="127.0.0.1",  # (the fake IGD is the gateway)
                                     ssdp=("127.0.0.1", igd[name].ssdp_port),
                                     methods=("upnp",))

    return {"pcp": gateway("pcp", ("pcp",)),
            "nat-pmp": gateway("nat-pmp", ("nat-pmp",)),
            "pcp -> nat-pmp": gateway("nat-pmp", ("pcp", "nat-pmp")),
            "upnp v2 (AddAnyPortMapping)": device("v2"),
            "upnp v1 (AddPortMapping)": device("v1"),
            "upnp v2 -> v1 fallback": device("v2-no-any")}


def ms(values: list[float]) -> str:
    cut = statistics.quantiles(values, n=10)[-1]
    return f"{statistics.median(values) * 1000:7.2f} {cut * 1000:7.2f}"


async def main(runs: int) -> None:
    udp = {"pcp": FakeUdp(pcp_answer), "nat-pmp": FakeUdp(natpmp_device())}
    igd = {"v2": FakeIgd(service=V2), "v1": FakeIgd(service=V1),
           "v2-no-any": FakeIgd(service=V2,
                                faults={"AddAnyPortMapping": (401, "Invalid Action")})}
    async with trio.open_nursery() as nursery:
        for fake in [*udp.values(), *igd.values()]:
            await nursery.start(fake.run)
        print(f"{'method':30} {'map: median p90':>16}  {'delete: median p90':>18}  (ms, "
              f"{runs} runs)")
        for name, make in cases(udp, igd).items():
            mapped, deleted = [], []
            for _ in range(runs):
                mapper = PortMapper(PORT, make())
                start = trio.current_time()
                result = await mapper.attempt()
                middle = trio.current_time()
                await mapper.close()
                assert result.outcome == "mapped", result
                mapped.append(middle - start)
                deleted.append(trio.current_time() - middle)
            print(f"{name:30} {ms(mapped):>16}  {ms(deleted):>18}")
        nursery.cancel_scope.cancel()


if __name__ == "__main__":
    trio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 200)
