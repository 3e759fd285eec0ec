// SPDX-License-Identifier: Apache-2.0
/// The errors every transport backend (MPI, NCCL) raises for the same failures: a peer that does
/// not answer in time, ranks holding different plans, a transport used after it was aborted.
#pragma once

#include <orch/config.hpp>

#include <stdexcept>

namespace orch::transport {

/// A wait on the transport did not finish within its timeout (a peer that died or never joined,
/// ranks running different exchanges). The transport has been aborted before the throw, so no
/// later call of this rank waits on it again. what() names the rank, the operation and the
/// timeout.
class timeout_error final : public std::runtime_error, public orch::error {
public:
  using std::runtime_error::runtime_error;
  [[nodiscard]] const char* what() const noexcept override { return std::runtime_error::what(); }
};

/// Ranks about to run an exchange hold different plans (their plan hashes differ); no payload
/// was moved. Raised on every rank by the same collective, naming the rank, its own hash and the
/// smallest and largest hash held by any rank (with two distinct plans: both of them).
class plan_mismatch_error final : public std::runtime_error, public orch::error {
public:
  using std::runtime_error::runtime_error;
  [[nodiscard]] const char* what() const noexcept override { return std::runtime_error::what(); }
};

/// A transport was used after it had been aborted (by a timeout or a backend failure): its
/// peers may be gone, so it refuses instead of waiting. what() names the rank and the operation.
class aborted_error final : public std::runtime_error, public orch::error {
public:
  using std::runtime_error::runtime_error;
  [[nodiscard]] const char* what() const noexcept override { return std::runtime_error::what(); }
};

} // namespace orch::transport
