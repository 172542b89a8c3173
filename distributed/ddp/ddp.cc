#include "distributed/ddp/ddp.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "distributed/init.h"
#include "log/trace.h"
#include "tensor/grad_mode.h"
#include "ops/raw_ops.h"

namespace colony::dist {
namespace {

// One line per parameter and buffer: what must agree across ranks.
std::vector<std::string> describe(const nn::Module& m) {
  std::vector<std::string> lines;
  auto add = [&](const char* kind, const nn::NamedTensors& named) {
    for (const auto& [name, t] : named) {
      std::ostringstream os;
      os << kind << " '" << name << "' " << dtype_name(t.dtype()) << " " << shape_str(t.sizes());
      lines.push_back(os.str());
    }
  };
  add("parameter", m.named_parameters());
  add("buffer", m.named_buffers());
  return lines;
}

std::string join(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  for (std::string line; std::getline(is, line);) out.push_back(line);
  return out;
}

}  // namespace

DistributedDataParallel::DistributedDataParallel(std::shared_ptr<nn::Module> module,
                                                 const DistributedDataParallelOptions& options)
    : module_(std::move(module)), options_(options) {
  if (!module_) throw std::invalid_argument("DistributedDataParallel: the module is null");
  register_module("module", module_);
  group_ = options_.process_group() ? options_.process_group() : default_process_group();
  if (options_.zero_stage() < 0 || options_.zero_stage() > 2)
    throw std::invalid_argument("DistributedDataParallel: zero_stage must be 0, 1 or 2, got " +
                                std::to_string(options_.zero_stage()));
  if (!group_) return;  // one process: nothing to synchronize

  verify_same_model_on_all_ranks();
  std::vector<Tensor> state = module_->parameters();
  for (const Tensor& b : module_->buffers()) state.push_back(b);
  broadcast_from_rank0(state);

  std::vector<Tensor> trainable;
  for (const Tensor& p : module_->parameters())
    if (p.requires_grad()) trainable.push_back(p);
  ReducerOptions ro;
  ro.first_bucket_bytes = static_cast<size_t>(options_.first_bucket_cap_mb() * 1024 * 1024);
  ro.bucket_bytes = static_cast<size_t>(options_.bucket_cap_mb() * 1024 * 1024);
  ro.shard_gradients = options_.zero_stage() == 2;
  ro.reduce_scatter = options_.zero_stage() == 1;
  if (ro.first_bucket_bytes == 0 || ro.bucket_bytes == 0)
    throw std::invalid_argument("DistributedDataParallel: bucket caps must be positive (got first_bucket_cap_mb=" +
                                std::to_string(options_.first_bucket_cap_mb()) +
                                ", bucket_cap_mb=" + std::to_string(options_.bucket_cap_mb()) + ")");
  reducer_ = std::make_unique<Reducer>(std::move(trainable), group_, ro);
}

DistributedDataParallel::~DistributedDataParallel() = default;

void DistributedDataParallel::verify_same_model_on_all_ranks() {
  const std::vector<std::string> mine = describe(*module_);
  const std::string text = join(mine);
  // Lengths first, then every rank's description padded to the longest.
  Tensor len = raw::from_vector(std::vector<int64_t>{static_cast<int64_t>(text.size())}, {1});
  std::vector<Tensor> lens;
  for (int r = 0; r < group_->size(); ++r) lens.push_back(raw::zeros({1}, TensorOptions(kInt64)));
  group_->wait_and_explain(group_->allgather(lens, len));
  int64_t longest = 0;
  for (const Tensor& l : lens) longest = std::max(longest, l.data_ptr<int64_t>()[0]);
  Tensor buf = raw::zeros({std::max<int64_t>(longest, 1)}, TensorOptions(kUInt8));
  std::copy(text.begin(), text.end(), buf.data_ptr<uint8_t>());
  std::vector<Tensor> all;
  for (int r = 0; r < group_->size(); ++r) all.push_back(raw::zeros({buf.numel()}, TensorOptions(kUInt8)));
  group_->wait_and_explain(group_->allgather(all, buf));

  auto text_of = [&](int r) {
    const char* p = reinterpret_cast<const char*>(all[r].data_ptr<uint8_t>());
    return std::string(p, p + lens[r].data_ptr<int64_t>()[0]);
  };
  const std::vector<std::string> ref = split_lines(text_of(0));
  for (int r = 1; r < group_->size(); ++r) {
    const std::vector<std::string> other = split_lines(text_of(r));
    for (size_t i = 0; i < std::max(ref.size(), other.size()); ++i) {
      const std::string a = i < ref.size() ? ref[i] : "nothing", b = i < other.size() ? other[i] : "nothing";
      if (a == b) continue;
      throw std::invalid_argument("DistributedDataParallel: the ranks hold different models; at entry " +
                                  std::to_string(i) + " rank 0 has " + a + " but rank " + std::to_string(r) +
                                  " has " + b + " (every rank must build the same module)");
    }
  }
}

void DistributedDataParallel::broadcast_from_rank0(const std::vector<Tensor>& tensors) {
  NoGradGuard no_grad;
  std::vector<std::shared_ptr<Work>> works;
  for (Tensor t : tensors) {
    if (!t.is_contiguous())
      throw std::invalid_argument("DistributedDataParallel: parameters and buffers must be contiguous");
    works.push_back(group_->broadcast(t, 0));
  }
  for (auto& w : works) group_->wait_and_explain(w);
}

void DistributedDataParallel::register_comm_hook(CommHook hook) {
  if (!hook) throw std::invalid_argument("register_comm_hook: the hook is empty");
  if (reducer_) reducer_->set_comm_hook(std::move(hook));
}

int DistributedDataParallel::register_forward_pre_hook(std::function<void()> hook) {
  if (!hook) throw std::invalid_argument("register_forward_pre_hook: the hook is empty");
  forward_pre_hooks_.emplace_back(next_hook_id_, std::move(hook));
  return next_hook_id_++;
}

void DistributedDataParallel::remove_forward_pre_hook(int id) {
  for (auto it = forward_pre_hooks_.begin(); it != forward_pre_hooks_.end(); ++it)
    if (it->first == id) {
      forward_pre_hooks_.erase(it);
      return;
    }
}

Tensor DistributedDataParallel::forward(const Tensor& input) {
  trace::Scope span("forward", "compute");
  for (const auto& [id, hook] : forward_pre_hooks_) hook();
  if (!group_) return module_->forward(input);
  if (options_.broadcast_buffers()) {
    std::vector<Tensor> buffers = module_->buffers();
    if (!buffers.empty()) broadcast_from_rank0(buffers);
  }
  const bool will_reduce = sync_ && GradMode::is_enabled();
  if (will_reduce) reducer_->prepare_for_forward();
  Tensor out = module_->forward(input);
  if (will_reduce) reducer_->prepare_for_backward(out);
  return out;
}

}  // namespace colony::dist
