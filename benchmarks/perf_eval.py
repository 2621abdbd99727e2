"""Speed of the performance model for a 70B job (Llama 3 70B, 4k sequences, 1,024-sequence batch).

Prints the median time of:

* ``evaluate`` with a pinned layout (TP 8 × PP 4 × DP 4 on 16 H100 nodes);
* ``evaluate`` with ``auto`` (the layout search), once per job (cold: layouts built) and again
  (warm: per-job caches filled, per-fabric bounds rebuilt for a new fabric each time);
* ``min_nodes_for_time`` for one hardware candidate and for a sweep of candidates like the
  solver's (3 GPUs × 4 interconnects × 4 NIC counts × 3 tier counts × 2 oversubscriptions),
  with fresh per-fabric caches (wall and CPU time: on a shared machine the CPU time is the
  steadier figure).

Run: ``python benchmarks/perf_eval.py`` (takes a few seconds).
"""

from __future__ import annotations

import statistics
import time

from topoopt.catalog import load_builtin_catalog, workload_model
from topoopt.models.instance import Checkpoint, Data, Instance, Training
from topoopt.models.performance import Parallelism
from topoopt.perf import Hardware, Job, evaluate, min_nodes_for_time, search, space

DAYS = 86_400.0


def seventy_b_job(catalog) -> Job:
    instance = Instance.model_validate(
        {
            "name": "bench",
            "workload": {
                "model": "llama3-70b",
                "training": {"tokens": 1.5e13, "sequence_length": 4096, "global_batch_sequences": 1024},
            },
            "budget": {"basis": "capex", "currency": "USD", "max": 1e9},
            "site": {"max_racks": 100},
            "catalog": {"price_book": "usd-capex"},
        }
    )
    training = Training(tokens=1.5e13, sequence_length=4096, global_batch_sequences=1024)
    return Job(model=workload_model(instance, catalog), training=training, data=Data(), checkpoint=Checkpoint())


def hardware(catalog, gpu: str, interconnect: str, nodes: int, nics: int, tiers: int, oversubscription: float) -> Hardware:
    link = catalog.by_id("interconnects")[interconnect]
    return Hardware(
        gpu=catalog.by_id("gpus")[gpu],
        gpus_per_node=8,
        nodes=nodes,
        nics_per_node=nics,
        link_gbps=link.gbps,
        interconnect=link,
        tiers=tiers,
        oversubscription=oversubscription,
    )


def median_us(call, repeat: int = 200) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def clear_fabric_caches() -> None:
    search._space_bounds.cache_clear()
    search._min_nodes_for_step.cache_clear()


def main() -> None:
    catalog = load_builtin_catalog()
    job = seventy_b_job(catalog)
    hw = hardware(catalog, "h100-sxm", "ib-ndr", 16, 8, 2, 1.0)
    layout = Parallelism(tp=8, pp=4, dp=4, zero_stage=1, microbatch=1)

    print("70B job: llama3-70b, sequence 4096, global batch 1024, 1.5e13 tokens")
    print(f"evaluate, pinned layout              {median_us(lambda: evaluate(job, hw, layout)):9.1f} µs (median)")

    space.layout_space.cache_clear()
    clear_fabric_caches()
    start = time.perf_counter()
    evaluate(job, hw)
    print(f"evaluate, auto, first call (cold)    {(time.perf_counter() - start) * 1e6:9.1f} µs")

    def auto_new_fabric():
        clear_fabric_caches()
        evaluate(job, hw)

    print(f"evaluate, auto, per new fabric       {median_us(auto_new_fabric, 50):9.1f} µs (median)")
    print(f"evaluate, auto, same fabric          {median_us(lambda: evaluate(job, hw), 50):9.1f} µs (median)")

    def one_candidate():
        clear_fabric_caches()
        min_nodes_for_time(job, hw, 60 * DAYS, 4096)

    print(f"min_nodes_for_time, one candidate    {median_us(one_candidate, 50):9.1f} µs (median, 60-day deadline)")

    sweep = [
        hardware(catalog, gpu, link, 1, nics, tiers, over)
        for gpu in ("a100-80gb-sxm", "h100-sxm", "h200-sxm")
        for link in ("ib-hdr", "ib-ndr", "roce-400", "tcp-100")
        for nics in (1, 2, 4, 8)
        for tiers in (1, 2, 3)
        for over in (1.0, 2.0)
    ]
    for days in (30, 90, 365):
        space.layout_space.cache_clear()
        clear_fabric_caches()
        start, start_cpu = time.perf_counter(), time.process_time()
        answers = [min_nodes_for_time(job, candidate, days * DAYS, 2048) for candidate in sweep]
        elapsed, cpu = time.perf_counter() - start, time.process_time() - start_cpu
        feasible = sum(answer is not None for answer in answers)
        print(
            f"min_nodes_for_time, {len(sweep)} candidates, {days:3d}-day deadline: {elapsed * 1e3:6.1f} ms wall, "
            f"{cpu * 1e3:6.1f} ms CPU ({elapsed / len(sweep) * 1e6:5.0f} µs each; {feasible} feasible)"
        )


if __name__ == "__main__":
    main()
