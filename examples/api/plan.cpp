// SPDX-License-Identifier: Apache-2.0
// Topologies, layouts, exchange plans, rank views, the reference executor, node-wise schedules
// and traffic as docs/api quotes them: 8 items of different sizes on 4 ranks in 2 nodes.
#include <orch/exchange/execute.hpp>
#include <orch/exchange/layout.hpp>
#include <orch/exchange/plan.hpp>
#include <orch/exchange/schedule.hpp>
#include <orch/topology.hpp>
#include <orch/traffic.hpp>

#include <cstddef>
#include <cstdio>
#include <vector>

namespace {

void print_ranks(const char* what, std::span<const orch::rank_t> v) {
  std::printf("%s", what);
  for (const orch::rank_t r : v) {
    std::printf(" %d", r);
  }
  std::printf("\n");
}

} // namespace

int main() {
  // [doc:topology]
  const auto topo = orch::topology::uniform(/*ranks=*/4, /*ranks_per_node=*/2);
  std::printf("%d ranks on %d nodes; rank 3: node %d, local index %d\n", topo.ranks(), topo.nodes(),
              topo.node_of(3), topo.local_index(3));
  // Nodes of different sizes, not contiguous: ranks 0, 2, 3 on node 0, rank 1 on node 1.
  const auto odd = orch::topology::from_node_of_rank({0, 1, 0, 0});
  print_ranks("node 0 of the odd topology:", odd.ranks_on(0));
  try {
    static_cast<void>(orch::topology::from_node_of_rank({0, 2}));
  } catch (const orch::invalid_argument& e) {
    std::printf("%s\n", e.what());
  }
  // [/doc:topology]

  // [doc:layout]
  // As sampled: 2 items per rank. Balanced: the rank of every item, slots by item index.
  const std::vector<orch::index_t> per_rank{2, 2, 2, 2};
  const orch::layout sampled = orch::layout::contiguous(per_rank);
  const std::vector<orch::rank_t> rank_of{3, 0, 2, 0, 1, 2, 1, 3};
  const orch::layout balanced = orch::layout::from_assignment(rank_of, 4);
  std::printf("item 4 goes from rank %d slot %lld to rank %d slot %lld; rank 0 holds",
              sampled.rank_of(4), static_cast<long long>(sampled.slot_of(4)), balanced.rank_of(4),
              static_cast<long long>(balanced.slot_of(4)));
  for (const orch::index_t i : balanced.items_on(0)) {
    std::printf(" %lld", static_cast<long long>(i));
  }
  std::printf("\n");
  try {
    static_cast<void>(orch::layout::from_placements(2, {0, 0, 1}, {0, 0, 0}));
  } catch (const orch::invalid_argument& e) {
    std::printf("%s\n", e.what());
  }
  // [/doc:layout]

  // [doc:plan]
  const std::vector<orch::bytes_t> bytes{16, 8, 24, 8, 32, 8, 16, 8};
  const orch::exchange_plan plan = orch::make_plan(sampled, balanced, bytes);
  std::printf("plan %016llx: %lld bytes, %lld pairs; rank 2 sends %lld bytes to rank 1\n",
              static_cast<unsigned long long>(plan.hash()),
              static_cast<long long>(plan.total_bytes()), static_cast<long long>(plan.pair_count()),
              static_cast<long long>(plan.pair(2, 1).bytes));
  // [/doc:plan]

  // [doc:view]
  const orch::rank_view v = plan.view(2); // what rank 2 hands its transport
  for (std::size_t p = 0; p < v.send_peers.size(); ++p) {
    std::printf("rank 2 -> rank %d: %lld items, %lld bytes at send offset %lld\n", v.send_peers[p],
                static_cast<long long>(v.send_peer_items[p]),
                static_cast<long long>(v.send_peer_bytes[p]),
                static_cast<long long>(v.send_peer_displs[p]));
  }
  std::printf("rank 2 receives %lld bytes from %zu peers; pack is %san identity\n",
              static_cast<long long>(v.destination_bytes), v.recv_peers.size(),
              v.pack_is_identity ? "" : "not ");
  // [/doc:view]

  // [doc:execute]
  // Every rank's source buffer: its items of `sampled` in slot order, each byte = item id.
  orch::rank_buffers source(4);
  for (orch::rank_t r = 0; r < 4; ++r) {
    for (const orch::index_t i : sampled.items_on(r)) {
      source[static_cast<std::size_t>(r)].insert(
          source[static_cast<std::size_t>(r)].end(),
          static_cast<std::size_t>(bytes[static_cast<std::size_t>(i)]), static_cast<std::byte>(i));
    }
  }
  const orch::rank_buffers moved = orch::execute(plan, source);
  const orch::rank_buffers back = orch::execute(orch::inverse(plan), moved);
  std::printf("rank 0 now holds %zu bytes, first from item %d; round trip %s\n", moved[0].size(),
              static_cast<int>(moved[0][0]), back == source ? "exact" : "BROKEN");
  // [/doc:execute]

  // [doc:pack]
  // What each rank of a real job does with its own view (here all ranks in one process).
  std::vector<orch::rank_view> views;
  orch::rank_buffers send(4);
  for (orch::rank_t r = 0; r < 4; ++r) {
    views.push_back(plan.view(r));
    send[static_cast<std::size_t>(r)].resize(static_cast<std::size_t>(views.back().source_bytes));
    orch::pack(views.back(), source[static_cast<std::size_t>(r)],
               send[static_cast<std::size_t>(r)]);
  }
  const orch::rank_buffers received = orch::all_to_all(views, send); // the all-to-all(v)
  std::vector<std::byte> destination(static_cast<std::size_t>(views[0].destination_bytes));
  orch::unpack(views[0], received[0], destination);
  std::printf("rank 0 by hand: %s\n", destination == moved[0] ? "same bytes" : "DIFFERENT");
  // [/doc:pack]

  // [doc:compose]
  const orch::layout sorted = orch::layout::from_assignment(std::vector<orch::rank_t>(8, 1), 4);
  const orch::exchange_plan onward = orch::make_plan(balanced, sorted, bytes);
  const orch::exchange_plan direct = orch::compose(plan, onward); // one exchange, not two
  std::printf("composed: %s; plan then its inverse is all self: %s\n",
              direct == orch::make_plan(sampled, sorted, bytes) ? "equal to make_plan" : "?",
              orch::compose(plan, orch::inverse(plan)).pair_count() == 4 ? "yes" : "no");
  try {
    static_cast<void>(orch::compose(plan, plan)); // plan ends at `balanced`, not `sampled`
  } catch (const orch::invalid_argument& e) {
    std::printf("%s\n", e.what());
  }
  // [/doc:compose]

  // [doc:schedule]
  const orch::node_schedule schedule = orch::make_schedule(plan, topo);
  std::printf("node-wise: at most %d remote peer per rank; same bytes: %s\n",
              schedule.max_remote_peers(), orch::execute(schedule, source) == moved ? "yes" : "no");
  // [/doc:schedule]

  // [doc:traffic]
  const orch::traffic t = orch::measure_traffic(plan, topo);
  std::printf("self %lld, intra-node %lld, inter-node %lld bytes (%.0f %% across nodes)\n",
              static_cast<long long>(t.self), static_cast<long long>(t.intra_node),
              static_cast<long long>(t.inter_node), 100.0 * t.inter_node_share());
  // The same without building a plan: item i moves from_rank[i] -> to_rank[i].
  const auto same =
      orch::measure_traffic(sampled.rank_of_items(), balanced.rank_of_items(), bytes, topo);
  std::printf("from the ranks alone: %s\n", same == t ? "equal" : "different");
  // [/doc:traffic]
  return 0;
}
