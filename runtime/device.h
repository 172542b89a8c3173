// Where a tensor lives: the CPU or one CUDA device.
#pragma once

#include <ostream>
#include <string>

namespace colony {

enum class DeviceType : uint8_t { CPU, CUDA };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;  // CUDA ordinal; always 0 for the CPU

  Device() = default;
  Device(DeviceType t, int i = 0) : type(t), index(t == DeviceType::CPU ? 0 : i) {}  // NOLINT
  // "cpu", "cuda", "cuda:N". Throws std::invalid_argument with the accepted forms otherwise.
  Device(const std::string& spec);  // NOLINT: Device dev = "cuda:1" reads naturally
  Device(const char* spec) : Device(std::string(spec)) {}  // NOLINT

  static Device cpu() { return Device(DeviceType::CPU); }
  static Device cuda(int i = 0) { return Device(DeviceType::CUDA, i); }
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  std::string str() const;
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

std::ostream& operator<<(std::ostream& os, const Device& d);

inline const Device kCPU = Device(DeviceType::CPU);

}  // namespace colony
