#include "runtime/device.h"

#include <cctype>
#include <stdexcept>

namespace colony {

Device::Device(const std::string& spec) {
  auto bad = [&]() {
    return std::invalid_argument("Device: cannot parse \"" + spec +
                                 "\"; expected \"cpu\", \"cuda\" or \"cuda:N\" (N >= 0)");
  };
  if (spec == "cpu") {
    type = DeviceType::CPU;
    index = 0;
    return;
  }
  if (spec.rfind("cuda", 0) != 0) throw bad();
  type = DeviceType::CUDA;
  index = 0;
  if (spec.size() == 4) return;
  if (spec[4] != ':' || spec.size() == 5 || spec.size() > 12) throw bad();
  for (size_t i = 5; i < spec.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(spec[i]))) throw bad();
  index = std::stoi(spec.substr(5));
}

std::string Device::str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }

std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

}  // namespace colony
