// SPDX-License-Identifier: Apache-2.0
#include "conversions.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace orch_bench {

namespace {

// A tolerance for floor / ceil of scaled sides: sqrt and division can land a hair below or
// above an exact multiple (20 px · 2.8 = 56.000000000000007 must round up to 56, not 84).
constexpr double slack = 1e-9;

orch::length_t round_half_up_to(orch::length_t x, orch::length_t f) {
  return std::max(f, (x + f / 2) / f * f);
}

orch::length_t floor_to(double x, orch::length_t f) {
  const auto n = static_cast<orch::length_t>(std::floor(x / static_cast<double>(f) + slack));
  return std::max(f, n * f);
}

orch::length_t ceil_to(double x, orch::length_t f) {
  const auto n = static_cast<orch::length_t>(std::ceil(x / static_cast<double>(f) - slack));
  return std::max(f, n * f);
}

} // namespace

frame_size vit_resize(orch::length_t width, orch::length_t height,
                      const vit_resize_options& options) {
  if (width < 1 || height < 1) {
    throw std::invalid_argument("vit_resize: image side below 1 pixel");
  }
  if (options.patch < 1 || options.merge < 1 || options.min_pixels < 0 ||
      options.max_pixels < options.patch * options.merge * options.patch * options.merge ||
      options.min_pixels > options.max_pixels) {
    throw std::invalid_argument("vit_resize: invalid options");
  }
  const orch::length_t f = options.patch * options.merge;
  frame_size s{round_half_up_to(width, f), round_half_up_to(height, f)};
  const double w = static_cast<double>(width);
  const double h = static_cast<double>(height);
  if (s.width * s.height > options.max_pixels) {
    const double scale = std::sqrt(w * h / static_cast<double>(options.max_pixels));
    s = {floor_to(w / scale, f), floor_to(h / scale, f)};
  } else if (s.width * s.height < options.min_pixels) {
    const double scale = std::sqrt(static_cast<double>(options.min_pixels) / (w * h));
    s = {ceil_to(w * scale, f), ceil_to(h * scale, f)};
  }
  return s;
}

orch::length_t image_patches(orch::length_t width, orch::length_t height,
                             const vit_resize_options& options) {
  const auto s = vit_resize(width, height, options);
  return (s.width / options.patch) * (s.height / options.patch);
}

orch::length_t audio_frames(double seconds) {
  if (!(seconds >= 0.0) || !std::isfinite(seconds)) {
    throw std::invalid_argument("audio_frames: duration is negative or not finite");
  }
  return std::max<orch::length_t>(1, std::llround(seconds * 100.0));
}

orch::length_t text_tokens(std::int64_t chars) {
  if (chars < 0) {
    throw std::invalid_argument("text_tokens: negative character count");
  }
  return (chars + 3) / 4;
}

orch::length_t video_frames(double seconds, const video_options& options) {
  if (!(seconds >= 0.0) || !std::isfinite(seconds) || !(options.fps > 0.0) ||
      options.max_frames < 1) {
    throw std::invalid_argument("video_frames: invalid duration or options");
  }
  const auto frames = std::llround(seconds * options.fps);
  return std::clamp<orch::length_t>(frames, 1, options.max_frames);
}

orch::length_t video_patches(double seconds, const video_options& options) {
  const orch::length_t frames = video_frames(seconds, options);
  vit_resize_options per_frame = options.frame;
  const orch::length_t patch_area = per_frame.patch * per_frame.patch;
  const orch::length_t budget = options.max_total_patches * patch_area / frames;
  per_frame.max_pixels = std::max(per_frame.min_pixels, std::min(per_frame.max_pixels, budget));
  const orch::length_t f = per_frame.patch * per_frame.merge;
  per_frame.max_pixels = std::max(per_frame.max_pixels, f * f);
  return frames * image_patches(options.frame_width, options.frame_height, per_frame);
}

} // namespace orch_bench
