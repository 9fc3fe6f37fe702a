#include "core/wav.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"

namespace towerflow {
namespace wav {
namespace {

void Put16(uint16_t v, std::string* out) {
  out->push_back(static_cast<char>(v & 0xff));
  out->push_back(static_cast<char>(v >> 8));
}
void Put32(uint32_t v, std::string* out) {
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

// Reads little-endian fields of `data` in order, refusing to pass its end.
class Reader {
 public:
  explicit Reader(absl::string_view data) : data_(data) {}
  size_t offset() const { return offset_; }
  bool done() const { return offset_ >= data_.size(); }

  absl::Status Skip(uint64_t n) {
    if (n > data_.size() - std::min(offset_, data_.size())) {
      return absl::InvalidArgumentError("Data too short when trying to read string");
    }
    offset_ += n;
    return absl::OkStatus();
  }
  absl::StatusOr<std::string> Text(size_t n) {
    const size_t at = offset_;
    if (absl::Status s = Skip(n); !s.ok()) return s;
    return std::string(data_.substr(at, n));
  }
  absl::Status Expect(absl::string_view text) {
    absl::StatusOr<std::string> found = Text(text.size());
    if (!found.ok()) return found.status();
    if (*found != text) {
      return absl::InvalidArgumentError(
          absl::StrCat("Header mismatch: Expected ", text, " but found ", *found));
    }
    return absl::OkStatus();
  }
  template <typename T>
  absl::StatusOr<T> Value() {
    const size_t at = offset_;
    if (absl::Status s = Skip(sizeof(T)); !s.ok()) return s;
    uint64_t v = 0;
    for (size_t i = 0; i < sizeof(T); ++i) {
      v |= static_cast<uint64_t>(static_cast<uint8_t>(data_[at + i])) << (8 * i);
    }
    return static_cast<T>(v);
  }

 private:
  absl::string_view data_;
  size_t offset_ = 0;
};

#define TW_WAV_ASSIGN(lhs, expr)                \
  auto lhs##_or = (expr);                       \
  if (!lhs##_or.ok()) return lhs##_or.status(); \
  auto lhs = *lhs##_or

}  // namespace

absl::StatusOr<std::string> Encode(const float* samples, int64_t sample_rate, int64_t channels,
                                   int64_t frames) {
  if (sample_rate <= 0 || sample_rate > std::numeric_limits<uint32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("sample_rate must be in (0, 2^32), got: ", sample_rate));
  }
  if (channels <= 0 || channels > std::numeric_limits<uint16_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrCat("num_channels must be in (0, 2^16), got: ", channels));
  }
  constexpr int64_t kHeader = 44;
  if (frames < 0 || frames > (std::numeric_limits<uint32_t>::max() - kHeader) / (2 * channels)) {
    return absl::InvalidArgumentError("Provided channels and frames cannot be encoded as a WAV.");
  }
  const int64_t count = frames * channels, data_size = 2 * count;
  std::string out;
  out.reserve(kHeader + data_size);
  out += "RIFF";
  Put32(static_cast<uint32_t>(kHeader + data_size - 8), &out);
  out += "WAVEfmt ";
  Put32(16, &out);
  Put16(1, &out);  // PCM
  Put16(static_cast<uint16_t>(channels), &out);
  Put32(static_cast<uint32_t>(sample_rate), &out);
  Put32(static_cast<uint32_t>(sample_rate * 2 * channels), &out);
  Put16(static_cast<uint16_t>(2 * channels), &out);
  Put16(16, &out);
  out += "data";
  Put32(static_cast<uint32_t>(data_size), &out);
  for (int64_t i = 0; i < count; ++i) {
    // TF's: round(x * 2^15), clamped (NaN stays NaN through min/max and
    // converts as the hardware does; here it becomes 0).
    const float scaled = std::round(samples[i] * 32768.0f);
    const int16_t s = std::isnan(scaled)
                          ? 0
                          : static_cast<int16_t>(std::min(std::max(scaled, -32768.0f), 32767.0f));
    Put16(static_cast<uint16_t>(s), &out);
  }
  return out;
}

absl::StatusOr<Audio> Decode(absl::string_view data) {
  Reader r(data);
  if (absl::Status s = r.Expect("RIFF"); !s.ok()) return s;
  TW_WAV_ASSIGN(file_size, r.Value<uint32_t>());
  (void)file_size;
  if (absl::Status s = r.Expect("WAVE"); !s.ok()) return s;
  TW_WAV_ASSIGN(chunk, r.Text(4));
  static const char* const kSkipped[] = {"JUNK", "bext", "iXML", "qlty",
                                         "mext", "levl", "link", "axml"};
  while (chunk != "fmt ") {
    if (std::find(std::begin(kSkipped), std::end(kSkipped), chunk) == std::end(kSkipped)) {
      return absl::InvalidArgumentError(absl::StrCat("Unexpected field ", chunk));
    }
    TW_WAV_ASSIGN(size, r.Value<uint32_t>());
    if (absl::Status s = r.Skip(size); !s.ok()) return s;
    TW_WAV_ASSIGN(next, r.Text(4));
    chunk = next;
  }
  TW_WAV_ASSIGN(format_size, r.Value<uint32_t>());
  if (format_size != 16 && format_size != 18) {
    return absl::InvalidArgumentError(
        absl::StrCat("Bad format chunk size for WAV: Expected 16 or 18, but got", format_size));
  }
  TW_WAV_ASSIGN(format, r.Value<uint16_t>());
  if (format != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Bad audio format for WAV: Expected 1 (PCM), but got", format));
  }
  Audio audio;
  TW_WAV_ASSIGN(channels, r.Value<uint16_t>());
  if (channels < 1) {
    return absl::InvalidArgumentError(
        "Bad number of channels for WAV: Expected at least 1, but got 0");
  }
  audio.channels = channels;
  TW_WAV_ASSIGN(rate, r.Value<uint32_t>());
  audio.sample_rate = rate;
  TW_WAV_ASSIGN(bytes_per_second, r.Value<uint32_t>());
  TW_WAV_ASSIGN(bytes_per_frame, r.Value<uint16_t>());
  TW_WAV_ASSIGN(bits, r.Value<uint16_t>());
  if (bits != 16) {
    return absl::InvalidArgumentError(
        absl::StrCat("Can only read 16-bit WAV files, but received ", bits));
  }
  const uint32_t want_frame = (16u * channels + 7) / 8;
  if (bytes_per_frame != want_frame) {
    return absl::InvalidArgumentError(absl::StrCat("Bad bytes per sample in WAV header: Expected ",
                                                   want_frame, " but got ", bytes_per_frame));
  }
  const uint64_t want_second = static_cast<uint64_t>(bytes_per_frame) * rate;
  if (bytes_per_second != want_second) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Bad bytes per second in WAV header: Expected ", want_second, " but got ", bytes_per_second,
        " (sample_rate=", rate, ", bytes_per_sample=", bytes_per_frame, ")"));
  }
  if (format_size == 18) {
    if (absl::Status s = r.Skip(2); !s.ok()) return s;
  }
  bool found = false;
  while (!r.done()) {
    TW_WAV_ASSIGN(id, r.Text(4));
    TW_WAV_ASSIGN(size, r.Value<uint32_t>());
    if (size > static_cast<uint32_t>(std::numeric_limits<int32_t>::max())) {
      return absl::InvalidArgumentError(
          absl::StrCat("WAV data chunk '", id, "' is too large: ", size,
                       " bytes, but the limit is ", std::numeric_limits<int32_t>::max()));
    }
    if (id != "data") {
      if (absl::Status s = r.Skip(size); !s.ok()) return s;
      continue;
    }
    if (found) return absl::InvalidArgumentError("More than one data chunk found in WAV");
    found = true;
    audio.frames = size / bytes_per_frame;
    const uint64_t count = static_cast<uint64_t>(audio.frames) * channels;
    const size_t start = r.offset();
    if (absl::Status s = r.Skip(2 * count); !s.ok()) return s;
    audio.samples.resize(count);
    for (uint64_t i = 0; i < count; ++i) {
      const uint16_t u =
          static_cast<uint16_t>(static_cast<uint8_t>(data[start + 2 * i]) |
                                (static_cast<uint8_t>(data[start + 2 * i + 1]) << 8));
      audio.samples[i] = static_cast<float>(static_cast<int16_t>(u)) / 32768.0f;
    }
    if (absl::Status s = r.Skip(size - 2 * count); !s.ok()) return s;
  }
  if (!found) return absl::InvalidArgumentError("No data chunk found in WAV");
  return audio;
}

#undef TW_WAV_ASSIGN

}  // namespace wav
}  // namespace towerflow
