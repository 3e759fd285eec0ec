// SPDX-License-Identifier: Apache-2.0
// `orch-bench calibrate`: fits per-phase cost coefficients to measured batch times and
// prints a model JSON that `orch-bench simulate --model` accepts.
#include "calibration_samples.hpp"
#include "command.hpp"
#include "input_error.hpp"
#include "model_json.hpp"
#include "options.hpp"

#include <orch/calibrate.hpp>

#include <cmath>
#include <fstream>
#include <iomanip>
#include <ostream>

namespace {

// Rescales a cost model from one cost unit to another (phases the samples do not cover).
orch::attention_cost rescale(const orch::attention_cost& c, double factor) {
  const auto r = [&](orch::cost_t v) {
    return static_cast<orch::cost_t>(std::llround(static_cast<double>(v) * factor));
  };
  return {r(c.linear), r(c.quadratic), r(c.per_item)};
}

int run_calibrate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  orch_bench::option_parser opts(
      "calibrate --samples FILE.csv [--model FILE.json | --preset NAME] [--unit-seconds S] "
      "[--no-per-item]",
      "Fits time ≈ a·Σl + b·Σl² + c·items (a, b, c ≥ 0, non-negative least squares) to the\n"
      "measured training (forward + backward) time of whole batches, per phase, and prints\n"
      "the base model with the fitted phases replaced, as JSON on stdout. The fit report\n"
      "(R², residuals) goes to stderr. Samples file: header 'phase,time_s,lengths', one\n"
      "batch per row, lengths space-separated (docs/orch-bench.md).");
  opts.value("samples", "FILE.csv", "measured batches");
  opts.value("model", "FILE.json", "base model (phases not in the samples are kept)");
  opts.value("preset", "NAME", "base model preset (omni-7b, omni-72b)", "omni-7b");
  opts.value("unit-seconds", "S",
             "seconds one cost unit stands for [default: the base model's, "
             "cost_unit_flops·(1+backward_factor)/achieved_flops]");
  opts.flag("no-per-item", "fit only a and b (no per-item term)");
  return orch_bench::exit_code_of("calibrate", err, [&] {
    opts.parse(args);
    if (opts.help_requested()) {
      opts.print_help(out);
      return orch_bench::exit_ok;
    }
    if (opts.given("model") && opts.given("preset")) {
      throw orch_bench::input_error("give --model or --preset, not both");
    }
    auto model = opts.given("model") ? orch_bench::load_model_file(opts.get("model"))
                                     : orch_bench::preset_model(opts.get("preset"));
    const std::string path = opts.get("samples");
    std::ifstream in(path);
    if (!in) {
      throw orch_bench::input_error(path + ": cannot open the samples file");
    }
    const auto samples = orch_bench::read_calibration_samples(in, path);
    const double train = 1.0 + model.sim.backward_factor;
    const double base_unit_s = model.sim.cost_unit_flops * train / model.sim.achieved_flops;
    double unit_s = base_unit_s;
    if (opts.given("unit-seconds")) {
      unit_s = opts.get_double("unit-seconds", 1e-300, 1e300);
      model.sim.cost_unit_flops = unit_s * model.sim.achieved_flops / train;
    }
    const orch::calibration_options copt{!opts.given("no-per-item")};
    err << "calibration: one cost unit = " << std::scientific << std::setprecision(4) << unit_s
        << " s of training time (" << model.sim.cost_unit_flops << " forward FLOPs at "
        << model.sim.achieved_flops << " FLOP/s, x" << std::defaultfloat << train
        << " for forward+backward)\n";
    std::vector<bool> fitted(model.model.encoders.size() + 1, false);
    for (const auto& [phase, list] : samples) {
      orch::attention_cost* target = nullptr;
      std::size_t index = model.model.encoders.size();
      for (std::size_t e = 0; e < model.model.encoders.size(); ++e) {
        if (model.model.encoders[e].name == phase) {
          target = &model.model.encoders[e].cost;
          index = e;
        }
      }
      if (phase == model.model.llm.name) {
        target = &model.model.llm.cost;
      }
      if (target == nullptr) {
        throw orch_bench::input_error(path + ": phase '" + phase +
                                      "' is neither an encoder nor the LLM of model '" +
                                      model.name + "'");
      }
      const auto fit = orch::calibrate_attention_cost(list, copt);
      *target = orch::to_cost_units(fit, unit_s);
      fitted[index] = true;
      err << "phase " << phase << ": " << list.size() << " samples, R² " << std::fixed
          << std::setprecision(5) << fit.r_squared << std::scientific << std::setprecision(3)
          << ", rms residual " << fit.rms_residual << " s, max |residual| " << fit.max_abs_residual
          << " s\n  a = " << fit.linear << " s per length unit → " << target->linear
          << ", b = " << fit.quadratic << " s per length unit² → " << target->quadratic
          << ", c = " << fit.per_item << " s per item → " << target->per_item << " cost units\n"
          << std::defaultfloat;
      if ((fit.quadratic > 0.0 && target->quadratic == 0) ||
          (fit.linear > 0.0 && target->linear == 0)) {
        err << "  warning: a fitted coefficient rounds to 0 cost units; pass a smaller "
               "--unit-seconds\n";
      }
    }
    if (unit_s != base_unit_s) {
      const double factor = base_unit_s / unit_s;
      for (std::size_t e = 0; e < model.model.encoders.size(); ++e) {
        if (!fitted[e]) {
          model.model.encoders[e].cost = rescale(model.model.encoders[e].cost, factor);
        }
      }
      if (!fitted.back()) {
        model.model.llm.cost = rescale(model.model.llm.cost, factor);
      }
    }
    model.description = orch_bench::cat("calibrated from ", path, " (base: ", model.name, ")");
    model.name += "-calibrated";
    model.validate();
    out << orch_bench::to_json(model).dump(2) << '\n';
    return orch_bench::exit_ok;
  });
}

const bool registered = orch_bench::register_command(
    {"calibrate", "fit cost coefficients to measured batch times; print a model JSON",
     run_calibrate});

} // namespace
