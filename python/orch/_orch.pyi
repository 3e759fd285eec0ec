"""
orch: batch post-balancing for multimodal LLM training (bindings of the C++ core)
"""

from collections.abc import Sequence
import enum
from typing import Annotated, overload

import numpy
import numpy.typing
from numpy.typing import NDArray


version: int = 100

class InfeasibleError(ValueError):
    pass

class Strategy(enum.Enum):
    """How a step is balanced (orch/orchestrate/strategy.hpp)."""

    def __str__(self) -> str: ...

    none = 0
    """as sampled: nothing moves"""

    llm_only = 1
    """balance the LLM phase only"""

    per_phase = 2
    """every phase balanced, bins in order"""

    orch = 3
    """every phase balanced, locality-aware placement"""

class PartitionAlgorithm(enum.Enum):
    """Which partitioner orch.partition runs (orch/partition/algorithm.hpp)."""

    def __str__(self) -> str: ...

    automatic = 0
    """'auto': chain by regime"""

    lpt = 1
    """'lpt': longest processing time first"""

    lpt_ls = 2
    """'lpt+ls': LPT, then local search"""

    kk = 3
    """'kk': Karmarkar-Karp largest differencing"""

    multifit = 4
    """'multifit'"""

    subset_sum = 5
    """'subset_sum': the paper's reduction"""

    exact = 6
    """'exact': branch and bound"""

def parse_strategy(name: str) -> Strategy:
    """The strategy whose tool name is `name`."""

def parse_partition_algorithm(name: str) -> PartitionAlgorithm:
    """The algorithm whose tool name is `name` ('auto', 'lpt+ls', ...)."""

class LinearCost:
    """per_unit * l + per_item (orch::linear_cost)."""

    def __init__(self, per_unit: int = 1, per_item: int = 0) -> None: ...

    @property
    def per_unit(self) -> int: ...

    @per_unit.setter
    def per_unit(self, arg: int, /) -> None: ...

    @property
    def per_item(self) -> int: ...

    @per_item.setter
    def per_item(self, arg: int, /) -> None: ...

    @overload
    def __call__(self, length: int) -> int:
        """Cost of one length."""

    @overload
    def __call__(self, lengths: numpy.typing.ArrayLike) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]:
        """Costs of an array of lengths (int64 in, int64 out)."""

class AttentionCost:
    """linear * l + quadratic * l**2 + per_item (orch::attention_cost)."""

    def __init__(self, linear: int = 1, quadratic: int = 0, per_item: int = 0) -> None: ...

    @property
    def linear(self) -> int: ...

    @linear.setter
    def linear(self, arg: int, /) -> None: ...

    @property
    def quadratic(self) -> int: ...

    @quadratic.setter
    def quadratic(self, arg: int, /) -> None: ...

    @property
    def per_item(self) -> int: ...

    @per_item.setter
    def per_item(self, arg: int, /) -> None: ...

    def __repr__(self) -> str: ...

    @overload
    def __call__(self, length: int) -> int:
        """Cost of one length."""

    @overload
    def __call__(self, lengths: numpy.typing.ArrayLike) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]:
        """Costs of an array of lengths (int64 in, int64 out)."""

class MemoryCost:
    """bytes_per_unit * l + bytes_per_item (orch::memory_cost)."""

    def __init__(self, bytes_per_unit: int = 1, bytes_per_item: int = 0) -> None: ...

    @property
    def bytes_per_unit(self) -> int: ...

    @bytes_per_unit.setter
    def bytes_per_unit(self, arg: int, /) -> None: ...

    @property
    def bytes_per_item(self) -> int: ...

    @bytes_per_item.setter
    def bytes_per_item(self, arg: int, /) -> None: ...

    @overload
    def __call__(self, length: int) -> int:
        """Cost of one length."""

    @overload
    def __call__(self, lengths: numpy.typing.ArrayLike) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]:
        """Costs of an array of lengths (int64 in, int64 out)."""

class PartitionResult:
    """An assignment of items to bins with its quality."""

    @property
    def bin_of(self) -> Annotated[NDArray[numpy.int32], dict(shape=(None,), writable=False)]: ...

    @property
    def loads(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def max_load(self) -> int: ...

    @property
    def lower_bound(self) -> int: ...

    @property
    def proven_optimal(self) -> bool: ...

    @property
    def algorithm(self) -> str: ...

    @property
    def work(self) -> int: ...

    @property
    def max_time(self) -> float: ...

    @property
    def time_lower_bound(self) -> float: ...

    def ratio_to_lower_bound(self) -> float: ...

def partition(costs: numpy.typing.ArrayLike, bins: int, *, algorithm: PartitionAlgorithm | str = 'auto', max_items_per_bin: int = 0, equal_counts: bool = False, second_resource: numpy.typing.ArrayLike | None = None, second_capacity: int = 0, speeds: numpy.typing.ArrayLike | None = None, groups: numpy.typing.ArrayLike | None = None, work_budget: int = 500000, tolerance_ppm: int = 10, time_limit_ms: float = 0.0) -> PartitionResult:
    """
    orch::partition: balance int64 costs into `bins` bins (GIL released).

    algorithm: a PartitionAlgorithm or its tool name ('auto', 'lpt', 'lpt+ls', 'kk',
    'multifit', 'subset_sum', 'exact'). groups: one id per item (-1: none).
    """

def lower_bound(costs: numpy.typing.ArrayLike, bins: int) -> int:
    """max(ceil(sum / bins), max cost)."""

def bin_loads(costs: numpy.typing.ArrayLike, bin_of: numpy.typing.ArrayLike, bins: int) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]:
    """The load of every bin."""

def min_microbatches(tokens: numpy.typing.ArrayLike, cap: int, *, work_budget: int = 200000) -> int:
    """
    The smallest micro-batch count whose token totals can each stay within `cap`.
    """

def common_microbatches(per_rank: numpy.typing.ArrayLike) -> int:
    """The micro-batch count every rank runs: the largest of the minima."""

def split_microbatches(costs: numpy.typing.ArrayLike, tokens: numpy.typing.ArrayLike, cap: int, m: int, *, work_budget: int = 200000) -> PartitionResult:
    """
    Splits one rank's items into exactly m micro-batches, each within `cap` tokens.
    """

class PaddedResult:
    """An assignment under the padded cost."""

    @property
    def bin_of(self) -> Annotated[NDArray[numpy.int32], dict(shape=(None,), writable=False)]: ...

    @property
    def counts(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def longest(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def padded(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def max_padded(self) -> int: ...

    @property
    def proven_optimal(self) -> bool: ...

def padded_partition(lengths: numpy.typing.ArrayLike, bins: int, equal_counts: bool = False) -> PaddedResult:
    """Exact minimisation of the largest count x longest item per bin."""

class Topology:
    """Ranks grouped into nodes (orch::topology)."""

    def __init__(self) -> None:
        """One rank on one node."""

    @staticmethod
    def uniform(ranks: int, ranks_per_node: int) -> Topology:
        """`ranks` ranks, `ranks_per_node` per node, consecutive."""

    @staticmethod
    def from_node_of_rank(node_of_rank: numpy.typing.ArrayLike) -> Topology:
        """An explicit node for every rank (int32 array)."""

    @property
    def ranks(self) -> int: ...

    @property
    def nodes(self) -> int: ...

    def node_of(self, rank: int) -> int: ...

    def local_index(self, rank: int) -> int: ...

    def ranks_per_node(self, node: int) -> int: ...

    def rank_at(self, node: int, local: int) -> int: ...

    def ranks_on(self, node: int) -> Annotated[NDArray[numpy.int32], dict(shape=(None,), writable=False)]:
        """The ranks of `node` in local-index order (int32)."""

    @property
    def node_of_ranks(self) -> Annotated[NDArray[numpy.int32], dict(shape=(None,), writable=False)]: ...

    @property
    def local_indices(self) -> Annotated[NDArray[numpy.int32], dict(shape=(None,), writable=False)]: ...

    @property
    def max_ranks_per_node(self) -> int: ...

    @property
    def is_uniform(self) -> bool: ...

    def __eq__(self, arg: Topology, /) -> bool: ...

    def __repr__(self) -> str: ...

class Layout:
    """Every item at (rank, slot) (orch::layout); immutable."""

    def __init__(self) -> None:
        """One rank, no items."""

    @staticmethod
    def from_assignment(rank_of: numpy.typing.ArrayLike, ranks: int) -> Layout:
        """Items on the given ranks, slots in increasing item order."""

    @staticmethod
    def from_keys(rank_of: numpy.typing.ArrayLike, ranks: int, key: numpy.typing.ArrayLike, secondary_key: numpy.typing.ArrayLike | None = None) -> Layout:
        """
        Items on the given ranks, ordered on each by (key, secondary_key, item).
        """

    @staticmethod
    def from_placements(ranks: int, rank_of: numpy.typing.ArrayLike, slot_of: numpy.typing.ArrayLike) -> Layout:
        """An explicit (rank, slot) for every item, validated."""

    @staticmethod
    def contiguous(items_per_rank: numpy.typing.ArrayLike) -> Layout:
        """Rank r holds the next items_per_rank[r] items."""

    @property
    def ranks(self) -> int: ...

    @property
    def items(self) -> int: ...

    @property
    def rank_of(self) -> Annotated[NDArray[numpy.int32], dict(shape=(None,), writable=False)]:
        """Rank of every item (int32)."""

    @property
    def slot_of(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]:
        """Slot of every item (int64)."""

    @property
    def order(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]:
        """All items in (rank, slot) order (int64)."""

    @property
    def first_on(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]:
        """Offsets of every rank's run in `order` (ranks + 1 entries)."""

    def items_on(self, rank: int) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]:
        """The items of `rank` in slot order (int64)."""

    def count_on(self, rank: int) -> int: ...

    def item_at(self, rank: int, slot: int) -> int: ...

    def __eq__(self, arg: Layout, /) -> bool: ...

    def __repr__(self) -> str: ...

class RankView:
    """One rank's part of a plan (orch::rank_view)."""

    @property
    def rank(self) -> int: ...

    @property
    def source_bytes(self) -> int: ...

    @property
    def destination_bytes(self) -> int: ...

    @property
    def self_bytes(self) -> int: ...

    @property
    def send_items(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def send_sizes(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def send_source_offsets(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def send_packed_offsets(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def send_peers(self) -> Annotated[NDArray[numpy.int32], dict(shape=(None,), writable=False)]: ...

    @property
    def send_peer_items(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def send_peer_bytes(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def send_peer_displs(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def send_peer_first(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def recv_items(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def recv_sizes(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def recv_packed_offsets(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def recv_destination_offsets(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def recv_peers(self) -> Annotated[NDArray[numpy.int32], dict(shape=(None,), writable=False)]: ...

    @property
    def recv_peer_items(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def recv_peer_bytes(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def recv_peer_displs(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def recv_peer_first(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def pack_is_identity(self) -> bool: ...

    @property
    def unpack_is_identity(self) -> bool: ...

class RowExchange:
    """
    One rank's exchange in rows of a tensor (orch/exchange/row_exchange.hpp).
    """

    @property
    def rank(self) -> int: ...

    @property
    def source_rows(self) -> int: ...

    @property
    def destination_rows(self) -> int: ...

    @property
    def send_splits(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]:
        """Rows to each rank (int64 [ranks])."""

    @property
    def recv_splits(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]:
        """Rows from each rank (int64 [ranks])."""

    @property
    def pack_index(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))] | None:
        """
        Source row of every send row (int64), or None when packing is the identity.
        """

    @property
    def unpack_index(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))] | None:
        """
        Received row of every destination row (int64), or None when the identity.
        """

class ExchangePlan:
    """
    Items of given byte sizes moved between two layouts (orch::exchange_plan); immutable.
    """

    def __init__(self) -> None: ...

    @property
    def ranks(self) -> int: ...

    @property
    def items(self) -> int: ...

    @property
    def from_layout(self) -> Layout: ...

    @property
    def to_layout(self) -> Layout: ...

    @property
    def item_bytes(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def hash(self) -> int:
        """64-bit hash in [0, 2**64)."""

    @property
    def total_bytes(self) -> int: ...

    def source_bytes(self, rank: int) -> int: ...

    def destination_bytes(self, rank: int) -> int: ...

    def self_bytes(self, rank: int) -> int: ...

    def source_offset(self, item: int) -> int: ...

    def destination_offset(self, item: int) -> int: ...

    def pair(self, source: int, destination: int) -> tuple[int, int]:
        """(items, bytes) that `source` sends to `destination`."""

    def pairs(self) -> numpy.ndarray:
        """
        Every communicating pair as a structured array (source, destination, items, bytes).
        """

    @property
    def pair_count(self) -> int: ...

    def view(self, rank: int) -> RankView:
        """The send and receive lists of `rank`."""

    def rows(self, rank: int, bytes_per_row: int) -> RowExchange:
        """The row form of the plan for `rank` (orch::make_row_exchange)."""

    def __eq__(self, arg: ExchangePlan, /) -> bool: ...

    def __repr__(self) -> str: ...

def make_plan(from_layout: Layout, to_layout: Layout, item_bytes: numpy.typing.ArrayLike) -> ExchangePlan:
    """
    The plan moving items of `item_bytes` (int64) bytes from one layout to another (GIL released).
    """

def inverse(plan: ExchangePlan) -> ExchangePlan:
    """The plan that moves everything back."""

def compose(a_to_b: ExchangePlan, b_to_c: ExchangePlan) -> ExchangePlan:
    """One plan doing `a_to_b` then `b_to_c`."""

class Traffic:
    """Bytes by locality class."""

    @property
    def self(self) -> int: ...

    @property
    def intra_node(self) -> int: ...

    @property
    def inter_node(self) -> int: ...

    def total(self) -> int: ...

    def inter_node_share(self) -> float: ...

def measure_traffic(plan: ExchangePlan, topology: Topology) -> Traffic:
    """Traffic of `plan` under `topology`."""

class NodeSchedule:
    """A plan split into an inter-node and an intra-node stage."""

    @property
    def topology(self) -> Topology: ...

    @property
    def staging(self) -> Layout: ...

    @property
    def inter_node(self) -> ExchangePlan: ...

    @property
    def intra_node(self) -> ExchangePlan: ...

    @property
    def staging_bytes(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    def remote_peers(self, rank: int) -> int: ...

    def max_remote_peers(self) -> int: ...

def make_schedule(plan: ExchangePlan, topology: Topology) -> NodeSchedule:
    """The node-wise schedule of `plan` on `topology`."""

class PlacementMethod(enum.Enum):
    """How the placement engine placed the items (orch::placement_method)."""

    def __str__(self) -> str: ...

    keep_local = 0
    """ranks keep what fits, the rest goes to their node first"""

    keep_local_settle = 1
    """keep_local, then a local search across all ranks"""

    node_first = 2
    """nodes shed a knapsack cover of their excess, then balance inside"""

    node_first_settle = 3
    """node_first, then a local search across all ranks"""

    rearranged_reference = 4
    """the reference bins mapped by rearrange_bins, then pulled home"""

    node_first_repartition = 5
    """
    node_first, then its unbalanced nodes repartitioned with the roomiest others
    """

    shed_fill = 6
    """nodes shed what their ranks cannot pack, packed into the other nodes"""

class LocalityResult:
    """A placement of items on ranks (orch::locality_result)."""

    @property
    def rank_of(self) -> Annotated[NDArray[numpy.int32], dict(shape=(None,), writable=False)]: ...

    @property
    def loads(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def max_load(self) -> int: ...

    @property
    def lower_bound(self) -> int: ...

    @property
    def reference_max_load(self) -> int: ...

    @property
    def target(self) -> int: ...

    @property
    def moved(self) -> Traffic: ...

    @property
    def inter_node_lower_bound(self) -> int: ...

    @property
    def method(self) -> PlacementMethod: ...

    @property
    def proven_optimal(self) -> bool: ...

    def ratio_to_lower_bound(self) -> float: ...

def place(costs: numpy.typing.ArrayLike, current_rank: numpy.typing.ArrayLike, item_bytes: numpy.typing.ArrayLike, topology: Topology, *, slack_ppm: int = 1000, threads: int = 1, reference_bin_of: numpy.typing.ArrayLike | None = None, algorithm: PartitionAlgorithm | str = 'auto', work_budget: int = 500000, tolerance_ppm: int = 10, measure: bool = True) -> LocalityResult:
    """
    orch::place, the placement engine (GIL released): every rank's load at most the
    target (lower bound + slack, or the reference bins' largest load + slack), and within
    that the fewest bytes leaving their node, then their rank. costs, item_bytes: int64;
    current_rank, reference_bin_of: int32. algorithm, work_budget, tolerance_ppm: the
    fallback partition's options (used only without reference bins).
    """

def locality_balance(costs: numpy.typing.ArrayLike, current_rank: numpy.typing.ArrayLike, item_bytes: numpy.typing.ArrayLike, topology: Topology, reference_bin_of: numpy.typing.ArrayLike | None = None, *, slack_ppm: int = 1000) -> LocalityResult:
    """
    orch::locality_balance (GIL released): as balanced as the reference bins (by default
    orch.partition's), up to slack_ppm, while keeping items where they are; never worse
    in bytes across nodes than rearrange_bins of the reference.
    """

class Rearrangement:
    """Where each balanced bin goes (orch::rearrangement)."""

    @property
    def rank_of_bin(self) -> Annotated[NDArray[numpy.int32], dict(shape=(None,), writable=False)]: ...

    @property
    def total_bytes(self) -> int: ...

    @property
    def kept_on_node(self) -> int: ...

    @property
    def kept_on_rank(self) -> int: ...

    def moves(self) -> Traffic:
        """The traffic of moving every item to its bin's rank."""

    def rank_of_items(self, bin_of: numpy.typing.ArrayLike) -> Annotated[NDArray[numpy.int32], dict(shape=(None,))]:
        """rank_of_bin[bin_of[i]] for every item (int32)."""

def rearrange_bins(bin_of: numpy.typing.ArrayLike, current_rank: numpy.typing.ArrayLike, item_bytes: numpy.typing.ArrayLike, topology: Topology) -> Rearrangement:
    """
    Node-wise rearrangement (GIL released): the bijection bins -> ranks keeping the most
    bytes on their node, then on their rank (exact).
    """

def inter_node_lower_bound(costs: numpy.typing.ArrayLike, current_rank: numpy.typing.ArrayLike, item_bytes: numpy.typing.ArrayLike, topology: Topology, target: int) -> int:
    """
    The fewest bytes that must leave their node in any placement whose largest load is at
    most `target` (fractional knapsack per node).
    """

class EncoderModel:
    """One encoder phase (orch::encoder_model)."""

    def __init__(self, *, name: str, fields: Sequence[str | tuple[str, int]], cost: AttentionCost = ..., output_divisor: int = 1, output_extra: int = 0, max_output_tokens: int = 0, input_bytes_per_unit: int = 0, feature_bytes_per_token: int = 0) -> None:
        """fields: names or (name, chunk_length) pairs (0: never cut)."""

    @property
    def name(self) -> str: ...

    @name.setter
    def name(self, arg: str, /) -> None: ...

    @property
    def fields(self) -> list:
        """(name, chunk_length) pairs."""

    @fields.setter
    def fields(self, arg: Sequence[str | tuple[str, int]], /) -> None: ...

    @property
    def cost(self) -> AttentionCost: ...

    @cost.setter
    def cost(self, arg: AttentionCost, /) -> None: ...

    @property
    def output_divisor(self) -> int: ...

    @output_divisor.setter
    def output_divisor(self, arg: int, /) -> None: ...

    @property
    def output_extra(self) -> int: ...

    @output_extra.setter
    def output_extra(self, arg: int, /) -> None: ...

    @property
    def max_output_tokens(self) -> int: ...

    @max_output_tokens.setter
    def max_output_tokens(self, arg: int, /) -> None: ...

    @property
    def input_bytes_per_unit(self) -> int: ...

    @input_bytes_per_unit.setter
    def input_bytes_per_unit(self, arg: int, /) -> None: ...

    @property
    def feature_bytes_per_token(self) -> int: ...

    @feature_bytes_per_token.setter
    def feature_bytes_per_token(self, arg: int, /) -> None: ...

    def output_tokens(self, input_length: int) -> int:
        """ceil(l / output_divisor) + output_extra."""

class LLMModel:
    """The LLM backbone (orch::llm_model)."""

    def __init__(self, *, name: str = 'llm', cost: AttentionCost = ..., text_bytes_per_token: int = 8) -> None: ...

    @property
    def name(self) -> str: ...

    @name.setter
    def name(self, arg: str, /) -> None: ...

    @property
    def cost(self) -> AttentionCost: ...

    @cost.setter
    def cost(self, arg: AttentionCost, /) -> None: ...

    @property
    def text_bytes_per_token(self) -> int: ...

    @text_bytes_per_token.setter
    def text_bytes_per_token(self, arg: int, /) -> None: ...

class ModelDescription:
    """Encoders and the LLM (orch::model_description)."""

    def __init__(self, *, encoders: Sequence[EncoderModel] = [], llm: LLMModel = ...) -> None: ...

    @property
    def encoders(self) -> list[EncoderModel]:
        """A copy of the encoders (assign a list to change them)."""

    @encoders.setter
    def encoders(self, arg: Sequence[EncoderModel], /) -> None: ...

    @property
    def llm(self) -> LLMModel: ...

    @llm.setter
    def llm(self, arg: LLMModel, /) -> None: ...

    def encoder_of_field(self, field: str) -> int: ...

    def field_list(self) -> str: ...

    def validate(self) -> None: ...

def model_preset(name: str) -> ModelDescription:
    """A built-in three-modality MLLM ('omni-7b', 'omni-72b')."""

def model_preset_names() -> list[str]:
    """Names of the built-in models."""

class ItemTable:
    """Every example of a step and its media items (orch::item_table)."""

    def __init__(self, model: ModelDescription | None = None) -> None:
        """
        An open table (model=None), or one that accepts only the model's fields.
        """

    @staticmethod
    def from_arrays(owner: numpy.typing.ArrayLike, local_index: numpy.typing.ArrayLike, text_tokens: numpy.typing.ArrayLike, media_example: numpy.typing.ArrayLike, media_field: numpy.typing.ArrayLike, media_length: numpy.typing.ArrayLike, media_position: numpy.typing.ArrayLike, *, field_names: Sequence[str], model: ModelDescription | None = None) -> ItemTable:
        """
        The table of whole columns in one call (item_table::from_columns; GIL released):
        per example owner (int32), local_index, text_tokens; per media item its example
        (non-decreasing), field code (int32 index into field_names), length, text position.
        """

    def add_example(self, owner: int, local_index: int, text_tokens: int, media: Sequence[tuple[str, int, int]] | None = None) -> int:
        """
        Appends an example; media: (field, length, text_position) triples. Returns its index.
        """

    @property
    def examples(self) -> int: ...

    @property
    def media_items(self) -> int: ...

    def __len__(self) -> int: ...

    @property
    def field_names(self) -> list[str]: ...

    @property
    def owners(self) -> Annotated[NDArray[numpy.int32], dict(shape=(None,))]: ...

    @property
    def local_indices(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]: ...

    @property
    def text_lengths(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]: ...

    @property
    def media_lengths(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]: ...

    @property
    def media_text_positions(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]: ...

    @property
    def media_fields(self) -> Annotated[NDArray[numpy.int32], dict(shape=(None,))]: ...

    @property
    def media_examples(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]: ...

    @property
    def media_offsets(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]: ...

    def validate(self, ranks: int) -> None: ...

class LocalBatch:
    """One rank's sampled examples (orch::local_batch)."""

    def __init__(self) -> None: ...

    @staticmethod
    def from_arrays(text_tokens: numpy.typing.ArrayLike, media_example: numpy.typing.ArrayLike, media_field: numpy.typing.ArrayLike, media_length: numpy.typing.ArrayLike, media_position: numpy.typing.ArrayLike, field_names: Sequence[str]) -> LocalBatch:
        """
        A batch from whole columns (as ItemTable.from_arrays, without owner and local index).
        """

    def add(self, text_tokens: int, media: Sequence[tuple[str, int, int]] | None = None) -> int:
        """
        Appends an example; media: (field, length, text_position) triples. Returns its local index.
        """

    @property
    def examples(self) -> int: ...

    @property
    def media_items(self) -> int: ...

    def __len__(self) -> int: ...

    @property
    def field_names(self) -> list[str]: ...

    def serialize(self, rank: int) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]:
        """The int64 buffer rank `rank` contributes to the metadata all-gather."""

    @staticmethod
    def checksum(words: numpy.typing.ArrayLike) -> int:
        """The checksum word of a buffer whose other words are `words`."""

def table_from_metadata(buffers: Sequence[numpy.typing.ArrayLike], *, model: ModelDescription | None = None) -> ItemTable:
    """
    The table of every rank's examples from the gathered buffers (buffers[r] from rank r; GIL released).
    """

def table_from_metadata_concatenated(concatenated: numpy.typing.ArrayLike, counts: numpy.typing.ArrayLike, *, model: ModelDescription | None = None) -> ItemTable:
    """
    table_from_metadata from buffers back to back, rank r's taking counts[r] words.
    """

def table_from_metadata_padded(padded: numpy.typing.ArrayLike, ranks: int, *, model: ModelDescription | None = None) -> ItemTable:
    """
    table_from_metadata from `ranks` equal slots (an all_gather of padded buffers).
    """

def append_metadata(table: ItemTable, buffers: Sequence[numpy.typing.ArrayLike]) -> None:
    """Appends every rank's examples to `table` (unchanged when it raises)."""

class Phase:
    """One compute phase (orch::phase_result)."""

    @property
    def name(self) -> str: ...

    @property
    def items(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]:
        """
        Encoders: the chunk of each phase item; LLM: empty (items are examples).
        """

    @property
    def costs(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def loads(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def placement(self) -> Layout: ...

    @property
    def max_load(self) -> int: ...

    @property
    def total(self) -> int: ...

    @property
    def lower_bound(self) -> int: ...

    @property
    def mean_load(self) -> float: ...

    @property
    def max_over_mean(self) -> float: ...

    @property
    def max_over_lower_bound(self) -> float: ...

    @property
    def idle_fraction(self) -> float: ...

    @property
    def proven_optimal(self) -> bool: ...

class Exchange:
    """
    One exchange between phases, forward and backward (orch::exchange_result).
    """

    @property
    def name(self) -> str: ...

    @property
    def forward(self) -> ExchangePlan: ...

    @property
    def backward(self) -> ExchangePlan: ...

    @property
    def self_bytes(self) -> int: ...

    @property
    def intra_node_bytes(self) -> int: ...

    @property
    def inter_node_bytes(self) -> int: ...

    @property
    def total_bytes(self) -> int: ...

    @property
    def inter_node_lower_bound(self) -> int: ...

class EncoderStep:
    """One encoder's phase and its two exchanges (orch::encoder_step)."""

    @property
    def phase(self) -> Phase: ...

    @property
    def inputs(self) -> Exchange: ...

    @property
    def features(self) -> Exchange: ...

    @property
    def owner_media(self) -> Layout: ...

    @property
    def feature_layout(self) -> Layout: ...

class Chunks:
    """How media items were cut into encoder forwards."""

    @property
    def cut(self) -> bool:
        """Whether any item was cut (else chunk c = media item c)."""

    @property
    def count(self) -> int: ...

    @property
    def media_of(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]:
        """Per chunk: its table media item (int64)."""

    @property
    def offset(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]:
        """Per chunk: first input unit in its item."""

    @property
    def length(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]:
        """Per chunk: input units."""

    @property
    def first_chunk(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]:
        """
        Per media item + 1: its first chunk (the last entry is the chunk count).
        """

class Assembly:
    """Each LLM rank's sequences as token copies (orch::assembly_map)."""

    @property
    def rank_begin(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def source(self) -> Annotated[NDArray[numpy.int32], dict(shape=(None,))]:
        """Per segment: -1 for text, else the encoder index (int32)."""

    @property
    def source_token(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]: ...

    @property
    def target_token(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]: ...

    @property
    def tokens(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]: ...

    @property
    def example(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]: ...

    @property
    def media(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,))]:
        """Per segment: the media item of a feature segment, -1 for text."""

    @property
    def sequence_offset(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def sequence_length(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

    @property
    def sequence_tokens(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]: ...

class StepPlan:
    """Everything a step needs, identical on every rank."""

    @property
    def strategy(self) -> Strategy: ...

    @property
    def hash(self) -> int:
        """64-bit plan hash in [0, 2**64)."""

    @property
    def encoders(self) -> list[EncoderStep]: ...

    @property
    def llm(self) -> Phase: ...

    @property
    def text(self) -> Exchange: ...

    @property
    def owner_examples(self) -> Layout: ...

    @property
    def assembly(self) -> Assembly: ...

    @property
    def chunks(self) -> Chunks: ...

    @property
    def media_encoder(self) -> Annotated[NDArray[numpy.int32], dict(shape=(None,), writable=False)]:
        """Per chunk: its encoder (int32)."""

    @property
    def output_tokens(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]:
        """Per chunk: encoder output tokens."""

    @property
    def sequence_length(self) -> Annotated[NDArray[numpy.int64], dict(shape=(None,), writable=False)]:
        """Per example: LLM tokens."""

    @property
    def feature_bytes_direct(self) -> int: ...

    @property
    def feature_bytes_two_hop(self) -> int: ...

    @property
    def table(self) -> ItemTable:
        """The ItemTable the step was planned from."""

    def phases(self) -> list[Phase]:
        """Every phase: the encoders' in model order, then the LLM."""

    def exchanges(self) -> list[Exchange]:
        """
        Every exchange in step order: per encoder inputs then features, then text.
        """

    def phase(self, name: str) -> Phase: ...

    def exchange(self, name: str) -> Exchange: ...

    def encoder(self, name: str) -> EncoderStep: ...

def orchestrate(table: ItemTable, model: ModelDescription, topology: Topology, *, strategy: Strategy | str = 'orch', threads: int = 1, llm_max_examples_per_rank: int = 0, llm_max_tokens_per_rank: int = 0, llm_groups: numpy.typing.ArrayLike | None = None, algorithm: PartitionAlgorithm | str = 'auto', work_budget: int = 500000, tolerance_ppm: int = 10, slack_ppm: int = 1000) -> StepPlan:
    """
    orch::orchestrate: plans one training step (GIL released).

    strategy: a Strategy or its name ('none', 'llm_only', 'per_phase', 'orch').
    """
