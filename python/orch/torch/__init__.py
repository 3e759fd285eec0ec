# SPDX-License-Identifier: Apache-2.0
"""orch over torch.distributed: plan a step on every rank, check that the plans agree, and
move payload rows with differentiable exchanges (gloo on CPU, NCCL on GPU).

The only part of the orch package that imports torch. See docs/torch.md.
"""
from ._assemble import assemble, sequence_lengths
from ._exchange import clear_caches, copies, exchange, exchange_nodewise, nodewise_groups
from ._step import PlanMismatchError, check_plan_hash, plan_step

__all__ = [
    "PlanMismatchError",
    "assemble",
    "check_plan_hash",
    "clear_caches",
    "copies",
    "exchange",
    "exchange_nodewise",
    "nodewise_groups",
    "plan_step",
    "sequence_lengths",
]
