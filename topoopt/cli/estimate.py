"""``topoopt estimate INSTANCE``: performance of an instance whose hardware is pinned.

The hardware comes from ``constraints.pins`` (server or gpu, nodes, interconnect, nics_per_node;
tiers default to 2 and the fabric is taken as non-blocking); the layout is the instance's
(pinned, or ``auto`` = the fastest that fits). ``--converged-storage`` (or
``pins.storage_network: converged``) puts the storage traffic on the compute NICs and shows what
it costs the step. Exit 2 names the missing pins; exit 3 prints the memory breakdown when nothing
fits.
"""

from __future__ import annotations

import json

import typer

from topoopt.cli.app import app
from topoopt.cli.common import EXIT_INFEASIBLE, EXIT_INPUT, err, load_or_exit

GB = "GB"


@app.command(help="Estimate throughput, memory and time to train for INSTANCE with pinned hardware "
             "('-' = stdin).")
def estimate(
    file: str = typer.Argument(..., metavar="INSTANCE", help="Instance YAML file, or '-' for standard input."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON on stdout."),
    converged_storage: bool = typer.Option(
        False,
        "--converged-storage",
        help="Storage traffic shares the compute NICs (converged storage network): each step also reads "
        "its data over them. Default: as pins.storage_network says, else a dedicated storage network.",
    ),
) -> None:
    from topoopt.perf import DoesNotFitError, EstimateError, pinned_hardware
    from topoopt.perf import estimate as estimate_instance

    loaded = load_or_exit(file)
    instance = loaded.instance
    try:
        converged = True if converged_storage else None
        _, hw = pinned_hardware(instance, converged=converged)
        result = estimate_instance(instance, converged=converged)
    except DoesNotFitError as exc:
        if json_out:
            typer.echo(json.dumps(_does_not_fit_json(instance.name, exc), indent=2))
        else:
            typer.echo(_does_not_fit_text(instance.name, exc))
        err(f"{loaded.file}: {exc}")
        raise typer.Exit(EXIT_INFEASIBLE) from None
    except EstimateError as exc:
        err(f"{loaded.file}: {exc}")
        raise typer.Exit(EXIT_INPUT) from None
    deadline_days = instance.goal.deadline_days
    deadline_met = None if deadline_days is None else result.time_to_train_days <= deadline_days
    if json_out:
        body = {
            "instance": instance.name,
            "hardware": _hardware_json(hw),
            **result.model_dump(mode="json"),
            "deadline_days": deadline_days,
            "deadline_met": deadline_met,
        }
        typer.echo(json.dumps(body, indent=2))
    else:
        text = _performance_text(instance.name, hw, result)
        if deadline_days is not None:
            verdict = "met" if deadline_met else "MISSED"
            text += f"\nDeadline     {deadline_days:g} days: {verdict}"
        typer.echo(text)


def _hardware_json(hw) -> dict:
    return {
        "gpu": hw.gpu.id,
        "gpus_per_node": hw.gpus_per_node,
        "nodes": hw.nodes,
        "gpus": hw.gpus,
        "interconnect": hw.interconnect.id,
        "nics_per_node": hw.nics_per_node,
        "link_gbps": hw.link_gbps,
        "tiers": hw.tiers,
        "oversubscription": hw.oversubscription,
        "storage_network": _storage_network(hw),
        "converged_storage_gb_per_step": hw.converged_storage_gb_per_step,
    }


def _storage_network(hw) -> str:
    return "converged" if hw.converged_storage_gb_per_step > 0 else "dedicated"


def _layout_text(p) -> str:
    interleave = f", {p.virtual_stages} virtual stages" if p.virtual_stages > 1 else ""
    recompute = f", {p.activation_recompute} recomputation" if p.activation_recompute else ""
    context = f" × CP {p.cp}" if p.cp > 1 else ""
    return f"TP {p.tp}{context} × PP {p.pp} × DP {p.dp}, ZeRO-{p.zero_stage}, micro-batch {p.microbatch}{interleave}{recompute}"


def _memory_lines(memory) -> list[str]:
    rows = [
        ("weights", memory.weights_gb),
        ("gradients", memory.gradients_gb),
        ("optimizer", memory.optimizer_gb),
        ("activations", memory.activations_gb),
        ("reserve", memory.reserve_gb),
    ]
    lines = [f"  {name:<12}{value:9.1f} GB" for name, value in rows]
    lines.append(f"  {'total':<12}{memory.total_gb:9.1f} GB of {memory.capacity_gb:.0f} GB")
    return lines


def _performance_text(name: str, hw, p) -> str:
    from topoopt.models.performance import UNCALIBRATED_NOTE  # not at import: keeps --help light

    idle = hw.gpus - p.gpus_used
    idle_text = f" ({idle} idle)" if idle else ""
    step = p.step
    cp_text = f"CP {step.cp_comm_s:.3f}, " if p.parallelism.cp > 1 else ""
    lines = [
        f"topoopt estimate · {name}",
        f"Hardware     {hw.nodes} × {hw.gpus_per_node} {hw.gpu.id} = {hw.gpus} GPUs; {hw.nics_per_node} × "
        f"{hw.interconnect.id} ({hw.link_gbps} Gb/s) per node; {hw.tiers}-tier fabric, "
        f"oversubscription {hw.oversubscription:g}:1",
        f"Layout       {_layout_text(p.parallelism)}; {p.gpus_used} GPUs used{idle_text}",
        f"Throughput   {p.tokens_per_s:,.0f} tokens/s ({p.tokens_per_s_per_gpu:,.0f} per GPU)",
        f"Compute      {p.tflops_per_gpu:.0f} model TFLOP/s per GPU (MFU {p.mfu:.1%}); "
        f"{p.hardware_tflops_per_gpu:.0f} with recomputation",
        f"Time         {p.time_to_train_days:,.1f} days to train; step {step.step_time_s:.2f} s; "
        f"bottleneck: {p.bottleneck.replace('_', ' ')}",
        *([] if p.calibrated else [f"Confidence   {UNCALIBRATED_NOTE}"]),
        "Step         "
        f"compute {step.compute_s:.3f} s, bubble {step.bubble_s:.3f} s, exposed communication "
        f"{step.exposed_comm_s:.3f} s (TP {step.tp_comm_s:.3f}, {cp_text}PP {step.pp_comm_s:.3f}, DP {step.dp_comm_s:.3f} s before overlap)"
        + (f", storage reads {step.storage_s:.3f} s" if hw.converged_storage_gb_per_step > 0 else ""),
        "Memory per GPU",
        *_memory_lines(p.memory),
        f"Storage      read {p.storage.read_gb_per_s:.3g} GB/s; checkpoint {p.storage.checkpoint_gb:,.0f} GB, "
        f"write {p.storage.write_gb_per_s:.3g} GB/s; capacity {p.storage.capacity_tb:,.1f} TB"
        + ("; low-latency tier" if p.storage.needs_low_latency else ""),
        f"Storage net  {_storage_network(hw)}; {p.storage.network_gbps:,.3g} Gb/s needed across the nodes"
        + (f"; {hw.converged_storage_gb_per_step:.3g} GB read per step over the compute NICs"
           if hw.converged_storage_gb_per_step > 0 else ""),
    ]
    if p.storage.cold_capacity_tb > 0:
        lines.append(f"Cold tier    {p.storage.cold_capacity_tb:,.1f} TB; archive write "
                     f"{p.storage.cold_write_gb_per_s:.3g} GB/s")
    return "\n".join(lines)


def _does_not_fit_text(name: str, exc) -> str:
    lines = [
        f"topoopt estimate · {name} · DOES NOT FIT in GPU memory",
        f"Leanest layout {_layout_text(exc.parallelism)}",
        "Memory per GPU",
        *_memory_lines(exc.memory),
        f"Smallest change that fits: {exc.change}" if exc.change else "No single change of the layout or node count fits",
    ]
    return "\n".join(lines)


def _does_not_fit_json(name: str, exc) -> dict:
    return {
        "instance": name,
        "fits": False,
        "parallelism": exc.parallelism.model_dump(mode="json"),
        "memory": exc.memory.model_dump(mode="json"),
        "smallest_change_that_fits": exc.change,
    }
