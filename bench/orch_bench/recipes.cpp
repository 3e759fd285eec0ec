// SPDX-License-Identifier: Apache-2.0
#include "recipes.hpp"

#include "conversions.hpp"
#include "csv_table.hpp"
#include "input_error.hpp"

#include <support/generators.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <utility>

// The repository's data folder; CMake passes its absolute path (bench/orch_bench/CMakeLists.txt).
#ifndef ORCH_BENCH_DATA_DIR
#define ORCH_BENCH_DATA_DIR "data"
#endif

namespace orch_bench {

namespace {

using orch::length_t;

// Chat-template tokens per message (role markers and separators of a ChatML-style template).
constexpr length_t template_per_message = 5;
// A single-turn task (caption, transcribe): a short instruction plus two messages.
constexpr length_t single_turn_overhead = 6 + 2 * template_per_message;
// LibriSpeech has no transcripts here: read English speech runs at about 15 characters
// (2.7 words) per second.
constexpr double speech_chars_per_second = 15.0;
// Long recordings are cropped to their first 10 minutes (a sequence-length cap).
constexpr double long_audio_max_seconds = 600.0;

// The length data, converted to trace units once.
struct length_data {
  std::vector<length_t> gsm8k;  // LLM tokens of a question + answer
  std::vector<length_t> hh;     // LLM tokens of a multi-turn dialogue
  std::vector<length_t> glaive; // LLM tokens of a tool-call dialogue (tools schema included)
  std::vector<length_t> llava;  // LLM tokens of a visual-instruction dialogue
  std::vector<std::pair<length_t, length_t>> coco_pairs; // (image patches, caption tokens)
  std::vector<length_t> coco_images;                     // image patches of val2017 images
  std::vector<double> librispeech;                       // seconds
  std::vector<std::pair<double, length_t>> commonvoice;  // (seconds, transcript tokens)
  std::vector<double> vox_turns;                         // seconds
  std::vector<double> vox_recordings;                    // seconds
};

length_data load(const std::string& dir) {
  length_data d;
  {
    const auto t = csv_table::read(dir + "/text/gsm8k_lengths.csv");
    const auto chars = t.column("total_chars");
    for (std::size_t r = 0; r < t.rows(); ++r) {
      d.gsm8k.push_back(text_tokens(t.integer(r, chars)) + 2 * template_per_message);
    }
  }
  {
    const auto t = csv_table::read(dir + "/text/hh_rlhf_harmless_base_test_lengths.csv");
    const auto chars = t.column("total_chars_chosen");
    const auto msgs = t.column("n_messages_chosen");
    for (std::size_t r = 0; r < t.rows(); ++r) {
      d.hh.push_back(text_tokens(t.integer(r, chars)) + template_per_message * t.integer(r, msgs));
    }
  }
  {
    const auto t = csv_table::read(dir + "/text/glaive_toolcall_en_demo_lengths.csv");
    const auto chars = t.column("total_chars");
    const auto msgs = t.column("n_messages");
    for (std::size_t r = 0; r < t.rows(); ++r) {
      d.glaive.push_back(text_tokens(t.integer(r, chars)) +
                         template_per_message * t.integer(r, msgs));
    }
  }
  {
    const auto t = csv_table::read(dir + "/multimodal/llava_instruct_100_lengths.csv");
    const auto chars = t.column("total_chars");
    const auto msgs = t.column("n_messages");
    for (std::size_t r = 0; r < t.rows(); ++r) {
      d.llava.push_back(text_tokens(t.integer(r, chars)) +
                        template_per_message * t.integer(r, msgs));
    }
  }
  {
    const auto t = csv_table::read(dir + "/multimodal/coco_val2017_caption_pairs.csv");
    const auto w = t.column("width");
    const auto h = t.column("height");
    const auto chars = t.column("caption_chars");
    for (std::size_t r = 0; r < t.rows(); ++r) {
      d.coco_pairs.emplace_back(image_patches(t.integer(r, w), t.integer(r, h)),
                                text_tokens(t.integer(r, chars)) + single_turn_overhead);
    }
  }
  {
    const auto t = csv_table::read(dir + "/image/coco_val2017_image_sizes_captions.csv");
    const auto w = t.column("width");
    const auto h = t.column("height");
    for (std::size_t r = 0; r < t.rows(); ++r) {
      d.coco_images.push_back(image_patches(t.integer(r, w), t.integer(r, h)));
    }
  }
  {
    const auto t = csv_table::read(dir + "/audio/librispeech_dev_clean_durations.csv");
    const auto s = t.column("duration_s");
    for (std::size_t r = 0; r < t.rows(); ++r) {
      d.librispeech.push_back(t.number(r, s));
    }
  }
  {
    const auto t = csv_table::read(dir + "/audio/commonvoice_twi_clips.csv");
    const auto s = t.column("duration_s");
    const auto chars = t.column("sentence_chars");
    for (std::size_t r = 0; r < t.rows(); ++r) {
      d.commonvoice.emplace_back(t.number(r, s),
                                 text_tokens(t.integer(r, chars)) + single_turn_overhead);
    }
  }
  {
    const auto t = csv_table::read(dir + "/audio/voxconverse_speech_segments.csv");
    const auto s = t.column("duration_s");
    for (std::size_t r = 0; r < t.rows(); ++r) {
      d.vox_turns.push_back(t.number(r, s));
    }
  }
  {
    const auto t = csv_table::read(dir + "/audio/voxconverse_recordings.csv");
    const auto s = t.column("last_speech_end_s");
    for (std::size_t r = 0; r < t.rows(); ++r) {
      d.vox_recordings.push_back(t.number(r, s));
    }
  }
  return d;
}

// One example under construction.
struct example {
  length_t text = 0;
  std::vector<media_item> media;
};

class sampler {
public:
  sampler(const length_data& data, std::uint64_t seed) : d_(data), rng_(seed) {}

  double uniform() { return orch::test::uniform01(rng_); }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<std::size_t>(
        orch::test::uniform_int(rng_, 0, static_cast<std::int64_t>(v.size()) - 1))];
  }
  std::int64_t integer(std::int64_t lo, std::int64_t hi) {
    return orch::test::uniform_int(rng_, lo, hi);
  }

  length_t text_only() {
    const double u = uniform();
    return u < 0.4 ? pick(d_.gsm8k) : u < 0.8 ? pick(d_.hh) : pick(d_.glaive);
  }
  example caption() {
    const auto& [patches, text] = pick(d_.coco_pairs);
    return {text, {{field::image, patches}}};
  }
  example llava(std::size_t images) {
    example e{pick(d_.llava), {}};
    for (std::size_t i = 0; i < images; ++i) {
      e.media.push_back({field::image, pick(d_.coco_images)});
    }
    return e;
  }
  example asr() {
    if (uniform() < 0.75) {
      const double s = pick(d_.librispeech);
      return {text_tokens(std::llround(s * speech_chars_per_second)) + single_turn_overhead,
              {{field::audio, audio_frames(s)}}};
    }
    const auto& [s, text] = pick(d_.commonvoice);
    return {text, {{field::audio, audio_frames(s)}}};
  }
  example spoken_dialogue() {
    const double s = pick(d_.vox_turns);
    return {pick(d_.hh), {{field::audio, audio_frames(s)}}};
  }
  example long_audio() {
    const double s = std::min(pick(d_.vox_recordings), long_audio_max_seconds);
    return {pick(d_.hh), {{field::audio, audio_frames(s)}}};
  }
  example video() {
    // Bounded Pareto durations on [10 s, 600 s], tail index 0.7 (median ≈ 25 s, mean ≈ 58 s).
    constexpr double lo = 10.0;
    constexpr double hi = 600.0;
    constexpr double alpha = 0.7;
    const double u = uniform();
    const double tail = 1.0 - std::pow(lo / hi, alpha);
    const double seconds = lo / std::pow(1.0 - u * tail, 1.0 / alpha);
    return {pick(d_.llava), {{field::video, video_patches(seconds)}}};
  }

private:
  const length_data& d_;
  std::mt19937_64 rng_;
};

using kind_fn = std::function<example(sampler&)>;

// The parts of each recipe and how each kind is drawn. Order is the draw order.
struct recipe_impl {
  recipe info;
  std::vector<kind_fn> draw;
};

const std::vector<recipe_impl>& impls() {
  static const std::vector<recipe_impl> all = [] {
    std::vector<recipe_impl> v;
    v.push_back(
        {{"omni",
          "three modalities mixed as in an omni-model SFT step: text-only, image-text, ASR, "
          "spoken dialogue and long-audio examples",
          {{0.35, "text",
            "gsm8k 40 % / hh-rlhf 40 % / glaive tool calls 20 %: ceil(chars/4) + 5 per message"},
           {0.30, "image-text",
            "COCO val2017 caption pair 60 % (its image, caption + 16) / LLaVA-Instruct dialogue "
            "40 % (a COCO val2017 image size)"},
           {0.20, "asr",
            "LibriSpeech dev-clean 75 % (transcript 15 chars/s) / Common Voice Twi 25 % (its "
            "sentence); + 16 tokens"},
           {0.10, "spoken-dialogue", "a VoxConverse speech turn with an hh-rlhf dialogue"},
           {0.05, "long-audio",
            "a VoxConverse recording (first 10 min) with an hh-rlhf dialogue"}}},
         {[](sampler& s) {
            return example{s.text_only(), {}};
          },
          [](sampler& s) { return s.uniform() < 0.6 ? s.caption() : s.llava(1); },
          [](sampler& s) { return s.asr(); }, [](sampler& s) { return s.spoken_dialogue(); },
          [](sampler& s) { return s.long_audio(); }}});
    v.push_back(
        {{"vision",
          "vision-language SFT: captions, visual dialogues, multi-image and video examples "
          "and some text-only ones",
          {{0.40, "caption", "a COCO val2017 caption pair: its image, caption + 16 tokens"},
           {0.20, "image-dialogue", "a LLaVA-Instruct dialogue with one COCO val2017 image size"},
           {0.15, "multi-image",
            "a LLaVA-Instruct dialogue with 2–6 (uniform) COCO val2017 image sizes"},
           {0.15, "video",
            "a modelled clip (bounded Pareto 10 s–10 min, α 0.7; 2 fps; 360p; at most 65,536 "
            "patches) with a LLaVA-Instruct dialogue"},
           {0.10, "text", "gsm8k 40 % / hh-rlhf 40 % / glaive 20 %"}}},
         {[](sampler& s) { return s.caption(); }, [](sampler& s) { return s.llava(1); },
          [](sampler& s) { return s.llava(static_cast<std::size_t>(s.integer(2, 6))); },
          [](sampler& s) { return s.video(); },
          [](sampler& s) {
            return example{s.text_only(), {}};
          }}});
    return v;
  }();
  return all;
}

} // namespace

const std::vector<recipe>& recipes() {
  static const std::vector<recipe> all = [] {
    std::vector<recipe> v;
    for (const auto& r : impls()) {
      v.push_back(r.info);
    }
    return v;
  }();
  return all;
}

std::string default_data_dir() {
  return std::filesystem::path(ORCH_BENCH_DATA_DIR).lexically_normal().string();
}

trace make_trace(const std::string& name, const std::string& data_dir, std::size_t examples,
                 std::uint64_t seed) {
  const recipe_impl* impl = nullptr;
  for (const auto& r : impls()) {
    if (r.info.name == name) {
      impl = &r;
    }
  }
  if (impl == nullptr) {
    std::string known;
    for (const auto& r : impls()) {
      known += (known.empty() ? "" : ", ") + r.info.name;
    }
    throw input_error(cat("unknown recipe '", name, "' (known: ", known, ")"));
  }
  // The data files are parsed once per folder and process (tests build several traces).
  static std::mutex mutex;
  static std::map<std::string, length_data> cache;
  const length_data* data = nullptr;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(data_dir);
    if (it == cache.end()) {
      it = cache.emplace(data_dir, load(data_dir)).first;
    }
    data = &it->second;
  }
  sampler s(*data, seed);
  trace t;
  for (std::size_t i = 0; i < examples; ++i) {
    const double u = s.uniform();
    double acc = 0.0;
    std::size_t kind = impl->info.parts.size() - 1;
    for (std::size_t k = 0; k < impl->info.parts.size(); ++k) {
      acc += impl->info.parts[k].share;
      if (u < acc) {
        kind = k;
        break;
      }
    }
    const example e = impl->draw[kind](s);
    t.add_example(std::to_string(i), e.text, e.media);
  }
  return t;
}

} // namespace orch_bench
