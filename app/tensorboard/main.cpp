// depthlab-tensorboard: TensorBoard event files out and in, for `depthlab-cli export
// --tensorboard` and `import-tensorboard`, in a process of its own (libprotobuf must not meet
// LibTorch's copy of it). No store, no torch: lines of JSON in, event records out, and back.
//   write FILE   stdin: {"step", "wall", "tag", "value"} (a scalar) or {"step", "wall", "tag",
//                "png": PATH} (an image; its size read from the PNG) a line; FILE gets the events.
//   read FILE    stdout: {"step", "wall", "tag", "value"} a scalar (simple_value, or a
//                one-element float tensor as TensorFlow 2 writes them); {"warning": ...} for a
//                file cut short (its records before kept); {"error": ...} and exit 3 for a
//                record whose checksum or contents are wrong.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include "event.pb.h"
#include "record_io.h"

namespace tb = depthlab::tensorboard;

namespace {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

tb::Event eventOf(const nlohmann::json& line) {
  tb::Event e;
  e.set_wall_time(line.value("wall", 0.0));
  e.set_step(line.at("step").get<int64_t>());
  auto* v = e.mutable_summary()->add_value();
  v->set_tag(line.at("tag").get<std::string>());
  if (line.contains("png")) {
    const std::string path = line.at("png").get<std::string>();
    std::string png = readFile(path);
    // The signature, then the IHDR chunk: width and height, big-endian, at bytes 16 and 20.
    if (png.size() < 26 || png.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0 ||
        png.compare(12, 4, "IHDR") != 0)
      throw std::runtime_error("'" + path + "' is not a PNG image");
    auto be32 = [&](size_t at) {
      uint32_t v = 0;
      for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(png[at + i]);
      return static_cast<int>(v);
    };
    auto* image = v->mutable_image();
    image->set_width(be32(16));
    image->set_height(be32(20));
    image->set_colorspace(static_cast<unsigned char>(png[25]) == 6 ? 4 : 3);  // RGBA, else RGB
    image->set_encoded_image_string(std::move(png));
    v->mutable_metadata()->mutable_plugin_data()->set_plugin_name("images");
  } else {
    const auto& value = line.at("value");  // null: a NaN the store kept
    v->set_simple_value(value.is_null() ? NAN : value.get<float>());
  }
  return e;
}

int write(const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) {
    std::fprintf(stderr, "cannot write '%s'\n", path.c_str());
    return 2;
  }
  tb::Event head;
  head.set_wall_time(0);
  head.set_file_version("brain.Event:2");
  std::string bytes;
  head.SerializeToString(&bytes);
  tb::writeRecord(out, bytes);
  std::string text;
  for (int64_t n = 1; std::getline(std::cin, text); ++n) {
    if (text.empty()) continue;
    try {
      const tb::Event e = eventOf(nlohmann::json::parse(text));
      e.SerializeToString(&bytes);
      tb::writeRecord(out, bytes);
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "line %lld: %s\n", static_cast<long long>(n), ex.what());
      return 2;
    }
  }
  out.flush();
  return out ? 0 : 2;
}

float halfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ffu;
  if (exp == 0) return (sign ? -1.0f : 1.0f) * std::ldexp(static_cast<float>(mant), -24);
  if (exp == 31) return mant ? NAN : (sign ? -INFINITY : INFINITY);
  const uint32_t bits = sign | ((exp + 112) << 23) | (mant << 13);
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// A scalar tensor's value (TensorFlow 2's summaries): nullopt when it holds none or several.
std::optional<double> scalarOf(const tb::Tensor& t) {
  if (t.float_val_size() == 1) return t.float_val(0);
  if (t.double_val_size() == 1) return t.double_val(0);
  if (t.half_val_size() == 1) {
    const auto bits = static_cast<uint32_t>(t.half_val(0));
    if (t.dtype() == 19) return halfToFloat(static_cast<uint16_t>(bits));
    if (t.dtype() == 14) {
      const uint32_t f32 = bits << 16;
      float f;
      std::memcpy(&f, &f32, 4);
      return f;
    }
  }
  const auto& c = t.tensor_content();
  if (t.dtype() == 1 && c.size() == 4) {
    float f;
    std::memcpy(&f, c.data(), 4);
    return f;
  }
  if (t.dtype() == 2 && c.size() == 8) {
    double d;
    std::memcpy(&d, c.data(), 8);
    return d;
  }
  return std::nullopt;
}

nlohmann::json valueJson(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json();
}

int read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cout << nlohmann::json{{"error", "cannot read '" + path + "'"}}.dump() << "\n";
    return 3;
  }
  std::string data, why;
  for (int64_t record = 0;; ++record) {
    const auto offset = static_cast<long long>(in.tellg());
    const auto status = tb::readRecord(in, data, why);
    if (status == tb::ReadStatus::End) return 0;
    if (status == tb::ReadStatus::Truncated) {
      std::cout << nlohmann::json{{"warning", "'" + path + "' ends inside record " +
                                                  std::to_string(record) + " (byte " +
                                                  std::to_string(offset) +
                                                  "): cut short, or still being written; the "
                                                  "records before it were read"}}
                       .dump()
                << "\n";
      return 0;
    }
    tb::Event e;
    if (status == tb::ReadStatus::Corrupt || !e.ParseFromString(data)) {
      if (status != tb::ReadStatus::Corrupt) why = "it is not an event";
      std::cout << nlohmann::json{{"error", "'" + path + "' is corrupt at record " +
                                                std::to_string(record) + " (byte " +
                                                std::to_string(offset) + "): " + why}}
                       .dump()
                << "\n";
      return 3;
    }
    if (!e.has_summary()) continue;
    for (const auto& v : e.summary().value()) {
      std::optional<double> value;
      if (v.has_simple_value())
        value = v.simple_value();
      else if (v.has_tensor())
        value = scalarOf(v.tensor());
      if (!value) continue;  // images, histograms, text: not scalars
      std::cout << nlohmann::json{{"step", e.step()},
                                  {"wall", e.wall_time()},
                                  {"tag", v.tag()},
                                  {"value", valueJson(*value)}}
                       .dump()
                << "\n";
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  GOOGLE_PROTOBUF_VERIFY_VERSION;
  const std::string mode = argc == 3 ? argv[1] : "";
  if (mode == "write") return write(argv[2]);
  if (mode == "read") return read(argv[2]);
  std::fprintf(stderr, "usage: depthlab-tensorboard write FILE < lines | read FILE\n");
  return 1;
}
