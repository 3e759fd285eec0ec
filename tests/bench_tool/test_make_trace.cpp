// SPDX-License-Identifier: Apache-2.0
// make-trace: unit conversions (pixels → patches, seconds → frames, chars → tokens, the
// video model) and the recipes built from the real length data.
#include "conversions.hpp"
#include "input_error.hpp"
#include "recipes.hpp"
#include "simulate_cli.hpp"
#include "trace.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>

using orch_bench::audio_frames;
using orch_bench::image_patches;
using orch_bench::text_tokens;
using orch_bench::vit_resize;

TEST_CASE("image → patches as a dynamic-resolution ViT sizes it") {
  // 640 × 480 → 644 × 476 (nearest multiples of 28) → 46 · 34 patches = 391 LLM tokens.
  const auto s = vit_resize(640, 480);
  CHECK(s.width == 644);
  CHECK(s.height == 476);
  CHECK(image_patches(640, 480) == 1564);
  // Already multiples of 28: unchanged. 448 × 448 → 16 · 16 · 4 patches.
  CHECK(image_patches(448, 448) == 1024);
  // Halves round up: 42 = 1.5 · 28 → 56.
  CHECK(vit_resize(42, 280).width == 56);
  // Every side is a multiple of patch · merge, so the 2×2 merge is exact.
  for (const auto& size : {std::pair{375, 500}, std::pair{640, 427}, std::pair{200, 145}}) {
    const auto w = size.first;
    const auto h = size.second;
    CAPTURE(w);
    CAPTURE(h);
    const auto r = vit_resize(w, h);
    CHECK(r.width % 28 == 0);
    CHECK(r.height % 28 == 0);
    CHECK(image_patches(w, h) % 4 == 0);
  }
}

TEST_CASE("image bounds: max_pixels scales down, min_pixels scales up") {
  // 2000 × 1500 = 3 Mpx > 802,816: s = sqrt(3e6 / 802816) = 1.933; 2000/s = 1034.6 → 1008,
  // 1500/s = 776 → 756; 36 · 27 · 4 = 3,888 patches ≤ 4,096.
  const auto big = vit_resize(2000, 1500);
  CHECK(big.width == 1008);
  CHECK(big.height == 756);
  CHECK(image_patches(2000, 1500) == 3888);
  CHECK(big.width * big.height <= 1024 * 28 * 28);
  // 20 × 20 → 28 × 28 = 784 < 3,136: s = 2.8; 20 · 2.8 = 56 exactly (not 84).
  const auto tiny = vit_resize(20, 20);
  CHECK(tiny.width == 56);
  CHECK(tiny.height == 56);
  CHECK(image_patches(20, 20) == 16);
  // Custom bounds.
  orch_bench::vit_resize_options o;
  o.max_pixels = 28 * 28 * 4;
  CHECK(image_patches(640, 480, o) <= 16);
  CHECK_THROWS_AS((void)vit_resize(0, 10), std::invalid_argument);
}

TEST_CASE("seconds → audio frames (100/s) and characters → tokens (4 chars/token)") {
  CHECK(audio_frames(5.92) == 592);
  CHECK(audio_frames(7.176) == 718); // nearest frame
  CHECK(audio_frames(30.0) == 3000);
  CHECK(audio_frames(0.04) == 4);
  CHECK(audio_frames(0.0) == 1);
  CHECK_THROWS_AS((void)audio_frames(-1.0), std::invalid_argument);
  CHECK(text_tokens(0) == 0);
  CHECK(text_tokens(1) == 1);
  CHECK(text_tokens(4) == 1);
  CHECK(text_tokens(5) == 2);
  CHECK(text_tokens(1853) == 464); // the est_tokens_chars_div4 column of the data
}

TEST_CASE("the video model: 2 fps, 360p frames, a total patch budget") {
  CHECK(orch_bench::video_frames(10.0) == 20);
  CHECK(orch_bench::video_frames(0.1) == 1);
  CHECK(orch_bench::video_frames(600.0) == 768); // capped
  // 10 s: 20 frames of 640 × 360 → 644 × 364 → 46 · 26 = 1,196 patches each.
  CHECK(orch_bench::video_patches(10.0) == 20 * 1196);
  // Longer clips lower the per-frame resolution to stay within the budget.
  for (const double s : {30.0, 60.0, 300.0, 600.0}) {
    CAPTURE(s);
    const auto p = orch_bench::video_patches(s);
    CHECK(p <= 65'536);
    CHECK(p >= 20 * 1196 / 2);
    CHECK(p % orch_bench::video_frames(s) == 0);
  }
}

namespace {

// The repository's data/ folder: the recipes' length data ships with the sources, so these
// tests always run (a missing file fails them, naming it).
std::string data_dir() {
  return orch_bench::default_data_dir();
}

} // namespace

TEST_CASE("the default data folder is the repository's data/ with every file a recipe reads") {
  const std::filesystem::path dir = data_dir();
  CHECK(dir.filename() == "data");
  CHECK(std::filesystem::exists(dir / "SOURCES.md"));
  for (const char* file :
       {"text/gsm8k_lengths.csv", "text/hh_rlhf_harmless_base_test_lengths.csv",
        "text/glaive_toolcall_en_demo_lengths.csv", "multimodal/llava_instruct_100_lengths.csv",
        "multimodal/coco_val2017_caption_pairs.csv", "image/coco_val2017_image_sizes_captions.csv",
        "audio/librispeech_dev_clean_durations.csv", "audio/commonvoice_twi_clips.csv",
        "audio/voxconverse_speech_segments.csv", "audio/voxconverse_recordings.csv"}) {
    CAPTURE(file);
    CHECK(std::filesystem::is_regular_file(dir / file));
  }
}

TEST_CASE("the bundled trace is what its documented make-trace command builds") {
  // data/SOURCES.md: make-trace --recipe omni --examples 30000 --seed 2025. The omni recipe
  // uses no std::pow, so the trace is the same on every platform.
  const auto made = orch_bench::make_trace("omni", data_dir(), 30000, 2025);
  const auto bundled = orch_bench::read_trace_file(orch_bench::bundled_trace_path());
  std::ostringstream a;
  std::ostringstream b;
  orch_bench::write_trace(a, made);
  orch_bench::write_trace(b, bundled);
  CHECK(made.size() == 30000);
  CHECK(a.str() == b.str());
}

TEST_CASE("recipes: shares sum to 1, unknown names are rejected") {
  REQUIRE(orch_bench::recipes().size() >= 2);
  for (const auto& r : orch_bench::recipes()) {
    CAPTURE(r.name);
    double sum = 0.0;
    for (const auto& p : r.parts) {
      sum += p.share;
    }
    CHECK(sum == doctest::Approx(1.0));
  }
  CHECK_THROWS_AS((void)orch_bench::make_trace("nope", data_dir(), 10, 1), orch_bench::input_error);
  CHECK_THROWS_AS((void)orch_bench::make_trace("omni", "/nonexistent", 10, 1),
                  orch_bench::input_error);
}

TEST_CASE("make_trace omni: the stated mix, deterministic per seed") {
  const auto t = orch_bench::make_trace("omni", data_dir(), 4000, 7);
  REQUIRE(t.size() == 4000);
  std::size_t text_only = 0;
  std::size_t image = 0;
  std::size_t audio = 0;
  std::size_t long_audio = 0;
  for (std::size_t e = 0; e < t.size(); ++e) {
    CHECK(t.text_tokens(e) > 0);
    const auto media = t.media(e);
    CHECK(media.size() <= 1);
    if (media.empty()) {
      ++text_only;
      continue;
    }
    CHECK(media[0].kind != orch_bench::field::video);
    if (media[0].kind == orch_bench::field::image) {
      ++image;
      CHECK(media[0].length % 4 == 0);
      CHECK(media[0].length <= 4096);
    } else {
      ++audio;
      CHECK(media[0].length <= 60'000); // long audio is cropped to 10 min
      long_audio += media[0].length > 32'000 ? 1U : 0U;
    }
  }
  // 35 % text, 30 % image-text, 35 % audio (ASR, spoken dialogue, long audio), ± 3 σ.
  CHECK(text_only == doctest::Approx(1400).epsilon(0.08));
  CHECK(image == doctest::Approx(1200).epsilon(0.09));
  CHECK(audio == doctest::Approx(1400).epsilon(0.08));
  CHECK(long_audio > 20);

  const auto again = orch_bench::make_trace("omni", data_dir(), 4000, 7);
  const auto other = orch_bench::make_trace("omni", data_dir(), 4000, 8);
  std::ostringstream a;
  std::ostringstream b;
  std::ostringstream c;
  orch_bench::write_trace(a, t);
  orch_bench::write_trace(b, again);
  orch_bench::write_trace(c, other);
  CHECK(a.str() == b.str());
  CHECK(a.str() != c.str());
}

TEST_CASE("make_trace vision: images, multi-image and video examples") {
  const auto t = orch_bench::make_trace("vision", data_dir(), 3000, 3);
  std::size_t video = 0;
  std::size_t multi = 0;
  for (std::size_t e = 0; e < t.size(); ++e) {
    const auto media = t.media(e);
    multi += media.size() >= 2 ? 1U : 0U;
    for (const auto& m : media) {
      CHECK(m.kind != orch_bench::field::audio);
      if (m.kind == orch_bench::field::video) {
        ++video;
        CHECK(m.length >= 20 * 1196 / 2);
        CHECK(m.length <= 65'536);
      }
    }
  }
  CHECK(video == doctest::Approx(450).epsilon(0.2));
  CHECK(multi == doctest::Approx(450).epsilon(0.2));
}
