// SPDX-License-Identifier: Apache-2.0
// Conversions from raw sizes (pixels, seconds, characters) to the trace units
// (docs/trace-format.md): vision patches of a dynamic-resolution ViT, audio frames, text tokens,
// and the video model.
#pragma once

#include <orch/types.hpp>

#include <cstdint>

namespace orch_bench {

/// How a dynamic-resolution ViT (Qwen2-VL style) sizes an image: each side is resized to a
/// multiple of patch × merge pixels (28 for 14-px patches and a 2×2 merge, so the merge is
/// exact), keeping the aspect ratio, with the pixel count held in [min_pixels, max_pixels].
struct vit_resize_options {
  orch::length_t patch = 14;                  ///< patch side in pixels
  orch::length_t merge = 2;                   ///< merge side in patches (2×2 → LLM token)
  orch::length_t min_pixels = 56 * 56;        ///< 16 patches, 4 LLM tokens
  orch::length_t max_pixels = 1024 * 28 * 28; ///< 4,096 patches, 1,024 LLM tokens
};

/// A frame size in pixels.
struct frame_size {
  orch::length_t width = 0;
  orch::length_t height = 0;
};

/// The size a `width` × `height` image is resized to (docs/trace-format.md, "image"):
/// 1. each side to the nearest multiple of f = patch·merge (halves round up), at least f;
/// 2. if that exceeds max_pixels: scale both sides by s = sqrt(w·h / max_pixels) and round
///    each down to a multiple of f (at least f);
/// 3. else if it is below min_pixels: scale by s = sqrt(min_pixels / (w·h)) and round each
///    up to a multiple of f.
/// Throws: std::invalid_argument for a side below 1 or invalid options.
[[nodiscard]] frame_size vit_resize(orch::length_t width, orch::length_t height,
                                    const vit_resize_options& options = {});

/// ViT input patches of an image: (w'/patch)·(h'/patch) for the vit_resize size.
/// Example: 640 × 480 → 644 × 476 → 46 · 34 = 1,564 patches (391 LLM tokens after 2×2 merge).
[[nodiscard]] orch::length_t image_patches(orch::length_t width, orch::length_t height,
                                           const vit_resize_options& options = {});

/// Audio encoder input frames (10 ms log-mel hops): round(seconds · 100), at least 1.
/// Throws: std::invalid_argument for a negative or non-finite duration.
[[nodiscard]] orch::length_t audio_frames(double seconds);

/// LLM tokens of `chars` characters of English text: ceil(chars / 4), the usual rule of thumb
/// for byte-pair tokenizers. Throws: std::invalid_argument for negative chars.
[[nodiscard]] orch::length_t text_tokens(std::int64_t chars);

/// The modelled video clip (no real video length data exists under a permissive licence):
/// frames sampled at `fps` from a `frame_width` × `frame_height` source (360p, a reduced
/// resolution), at most `max_frames`; every frame is resized by vit_resize with max_pixels
/// lowered so the clip stays within `max_total_patches` (a sequence budget, as video MLLMs do).
struct video_options {
  double fps = 2.0;
  orch::length_t max_frames = 768;
  orch::length_t frame_width = 640;
  orch::length_t frame_height = 360;
  orch::length_t max_total_patches = 65'536; ///< 16,384 LLM tokens after the 2×2 merge
  vit_resize_options frame{};
};

/// Sampled frames of a clip: round(seconds · fps) clamped to [1, max_frames].
[[nodiscard]] orch::length_t video_frames(double seconds, const video_options& options = {});

/// ViT input patches of a clip: frames × patches per frame, with each frame's pixel budget
/// min(frame.max_pixels, max_total_patches · patch² / frames), never below frame.min_pixels.
[[nodiscard]] orch::length_t video_patches(double seconds, const video_options& options = {});

} // namespace orch_bench
