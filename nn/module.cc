#include "nn/module.h"

#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <stdexcept>
#include <typeinfo>

#include "autograd/ops.h"
#include "base/type_name.h"
#include "nn/init.h"
#include "ops/raw_ops.h"
#include "tensor/grad_mode.h"
#include "tensor/random.h"

namespace colony::nn {
namespace {

// torch's checks and messages (Module.register_parameter / register_buffer / add_module).
void check_name(const std::string& name, const std::string& what) {
  if (name.find('.') != std::string::npos) {
    throw std::invalid_argument(what + " name can't contain \".\"" + (what == "module" ? ", got: " + name : ""));
  }
  if (name.empty()) throw std::invalid_argument(what + " name can't be empty string \"\"");
}

template <typename Vec>
bool has_name(const Vec& v, const std::string& name) {
  for (const auto& [n, _] : v)
    if (n == name) return true;
  return false;
}

// The entry `name` of v, or null.
template <typename Vec>
auto* find_named(Vec& v, const std::string& name) {
  for (auto& entry : v)
    if (entry.first == name) return &entry.second;
  return static_cast<decltype(&v.front().second)>(nullptr);
}

[[noreturn]] void name_taken(const std::string& name) {
  throw std::invalid_argument("attribute '" + name + "' already exists");
}

}  // namespace

Tensor Module::forward(const Tensor&) {
  throw std::logic_error(name() +
                         " has no forward(const Tensor&): override it in the module class, or, when its forward "
                         "takes other arguments, call it through its own type or an nn::AnyModule");
}

std::string Module::name() const {
  std::string full = type_name(typeid(*this));
  size_t colon = full.rfind("::");
  return colon == std::string::npos ? full : full.substr(colon + 2);
}

void Module::add_child(const std::string& name, std::shared_ptr<Module> child) {
  check_name(name, "module");
  if (!child) throw std::invalid_argument("register_module: submodule \"" + name + "\" is null");
  if (has_name(params_, name) || has_name(buffers_, name)) name_taken(name);
  // A submodule of that name is replaced in its place, as torch's add_module does.
  if (auto* existing = find_named(children_, name)) {
    *existing = std::move(child);
    return;
  }
  children_.emplace_back(name, std::move(child));
}

Tensor& Module::register_parameter(const std::string& name, Tensor t, bool requires_grad) {
  check_name(name, "parameter");
  if (has_name(children_, name) || has_name(buffers_, name)) name_taken(name);
  if (t.defined() && requires_grad) t.requires_grad_(true);
  // A parameter of that name is replaced in its place, as torch's register_parameter does.
  if (Tensor* existing = find_named(params_, name)) {
    *existing = std::move(t);
    return *existing;
  }
  params_.emplace_back(name, std::move(t));
  return params_.back().second;
}

Tensor& Module::replace_parameter(const std::string& name, Tensor t, bool requires_grad) {
  for (auto& [n, p] : params_) {
    if (n != name) continue;
    if (!t.defined()) throw std::invalid_argument("replace_parameter: the new \"" + name + "\" of " + this->name() + " is undefined");
    if (p.defined() && p.sizes() != t.sizes()) {
      throw std::invalid_argument("replace_parameter: \"" + name + "\" of " + this->name() + " has shape " +
                                  shape_str(p.sizes()) + ", the new tensor " + shape_str(t.sizes()));
    }
    if (requires_grad) t.requires_grad_(true);
    p = std::move(t);
    return p;
  }
  throw std::invalid_argument("replace_parameter: " + this->name() + " has no parameter \"" + name +
                              "\" (register_parameter adds one)");
}

Tensor Module::remove_parameter(const std::string& name) {
  for (auto it = params_.begin(); it != params_.end(); ++it) {
    if (it->first != name) continue;
    Tensor t = std::move(it->second);
    params_.erase(it);
    return t;
  }
  std::string names;
  for (const auto& [n, p] : params_) names += (names.empty() ? "" : ", ") + n;
  throw std::invalid_argument(this->name() + " has no parameter \"" + name + "\" (it has: " + names + ")");
}

Tensor& Module::register_buffer(const std::string& name, Tensor t, bool persistent) {
  check_name(name, "buffer");
  if (has_name(children_, name) || has_name(params_, name)) name_taken(name);
  if (persistent) {
    non_persistent_.erase(name);
  } else {
    non_persistent_.insert(name);
  }
  // A buffer of that name is replaced in its place, as torch's register_buffer does.
  if (Tensor* existing = find_named(buffers_, name)) {
    *existing = std::move(t);
    return *existing;
  }
  buffers_.emplace_back(name, std::move(t));
  return buffers_.back().second;
}

void Module::collect(const std::string& prefix, bool recurse, bool params, NamedTensors& out) const {
  for (const auto& [n, t] : params ? params_ : buffers_)
    if (t.defined()) out.emplace_back(prefix + n, t);
  if (!recurse) return;
  for (const auto& [n, c] : children_) c->collect(prefix + n + ".", true, params, out);
}

NamedTensors Module::named_parameters(bool recurse) const {
  NamedTensors out;
  collect("", recurse, true, out);
  // A parameter shared by two submodules is listed once, under its first name (as PyTorch).
  NamedTensors unique;
  std::set<const TensorImpl*> seen;
  for (auto& p : out)
    if (seen.insert(p.second.impl()).second) unique.push_back(std::move(p));
  return unique;
}

void Module::collect_unnamed(bool recurse, bool params, std::vector<Tensor>& out) const {
  for (const auto& [n, t] : params ? params_ : buffers_)
    if (t.defined()) out.push_back(t);
  if (!recurse) return;
  for (const auto& [n, c] : children_) c->collect_unnamed(true, params, out);
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> all;
  collect_unnamed(recurse, true, all);
  // Shared parameters once, at their first place, as named_parameters lists them.
  std::vector<Tensor> out;
  out.reserve(all.size());
  std::set<const TensorImpl*> seen;
  for (Tensor& t : all)
    if (seen.insert(t.impl()).second) out.push_back(std::move(t));
  return out;
}

NamedTensors Module::named_buffers(bool recurse) const {
  NamedTensors out;
  collect("", recurse, false, out);
  return out;
}

std::vector<Tensor> Module::buffers(bool recurse) const {
  std::vector<Tensor> out;
  collect_unnamed(recurse, false, out);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::children() const {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& [_, c] : named_children()) out.push_back(std::move(c));
  return out;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_children() const {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  std::set<const Module*> seen;
  for (const auto& [n, c] : children_)
    if (seen.insert(c.get()).second) out.emplace_back(n, c);
  return out;
}

void Module::collect_modules(const std::string& prefix, std::set<const Module*>& seen,
                             std::vector<std::pair<std::string, std::shared_ptr<Module>>>& out) {
  if (!seen.insert(this).second) return;
  out.emplace_back(prefix, shared_from_this());
  for (const auto& [n, c] : children_) c->collect_modules(prefix.empty() ? n : prefix + "." + n, seen, out);
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_modules() {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  std::set<const Module*> seen;
  collect_modules("", seen, out);
  return out;
}

std::vector<std::shared_ptr<Module>> Module::modules() {
  std::vector<std::shared_ptr<Module>> out;
  for (auto& [name, m] : named_modules()) out.push_back(m);
  return out;
}

void Module::apply(const std::function<void(Module&)>& fn) {
  for (auto& c : children()) c->apply(fn);
  fn(*this);
}

void Module::requires_grad_(bool requires_grad) {
  // A parameter shared by two modules is listed once.
  for (Tensor& p : parameters()) p.requires_grad_(requires_grad);
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [_, c] : children_) c->train(on);
}

void set_data(Tensor& dst, const Tensor& src) {
  TensorImpl* d = dst.impl();
  TensorImpl* s = src.impl();
  d->storage = s->storage;
  d->sizes = s->sizes;
  d->strides = s->strides;
  d->offset = s->offset;
  d->dtype = s->dtype;
}

namespace {
void convert_in_place(Tensor& t, Device device, std::optional<DType> dtype, bool non_blocking) {
  if (!t.defined()) return;
  // Integer buffers (BatchNorm's num_batches_tracked) keep their type, as Module.to(dtype) does.
  DType target = dtype && is_floating(t.dtype()) ? *dtype : t.dtype();
  NoGradGuard no_grad;
  Tensor moved = raw::to(t, device, target, non_blocking);
  if (moved.is_same(t)) return;
  set_data(t, moved);
  Tensor g = t.grad();
  if (g.defined()) t.mutable_grad() = raw::to(g, device, target, non_blocking);
}
}  // namespace

void Module::to(Device device, DType dtype, bool non_blocking) {
  for (auto& [_, t] : params_) convert_in_place(t, device, dtype, non_blocking);
  for (auto& [_, t] : buffers_) convert_in_place(t, device, dtype, non_blocking);
  for (auto& [_, c] : children_) c->to(device, dtype, non_blocking);
}

void Module::to(Device device, bool non_blocking) {
  for (auto& [_, t] : params_) convert_in_place(t, device, std::nullopt, non_blocking);
  for (auto& [_, t] : buffers_) convert_in_place(t, device, std::nullopt, non_blocking);
  for (auto& [_, c] : children_) c->to(device, non_blocking);
}

void Module::to(DType dtype) {
  for (auto& [_, t] : params_) convert_in_place(t, t.device(), dtype, false);
  for (auto& [_, t] : buffers_) convert_in_place(t, t.device(), dtype, false);
  for (auto& [_, c] : children_) c->to(dtype);
}

void Module::zero_grad(bool set_to_none) {
  for (Tensor& p : parameters()) {
    Tensor& g = p.mutable_grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      g = Tensor();
    } else {
      raw::fill_(g, 0.0);
    }
  }
}

NamedTensors Module::state_dict() const {
  NamedTensors out;
  for (const auto& [n, t] : params_)
    if (t.defined()) out.emplace_back(n, t);
  for (const auto& [n, t] : buffers_)
    if (t.defined() && !non_persistent_.count(n)) out.emplace_back(n, t);
  for (const auto& [n, c] : children_)
    for (auto& [sub, t] : c->state_dict()) out.emplace_back(n + "." + sub, t);
  return out;
}

Module::IncompatibleKeys Module::load_state_dict(const NamedTensors& state, bool strict) {
  NamedTensors own = state_dict();
  std::map<std::string, Tensor> given(state.begin(), state.end());
  std::vector<std::string> missing, unexpected, mismatched;
  std::set<std::string> own_names;
  // A tensor registered under several names (a tied weight) is one entry: any of its names in the
  // checkpoint loads it (nn::save writes it once, under its first name). Its source is the first
  // of its names that the checkpoint holds.
  std::map<const TensorImpl*, std::vector<std::string>> names_of;
  std::vector<const TensorImpl*> order;
  std::map<const TensorImpl*, Tensor> target;
  for (auto& [n, t] : own) {
    own_names.insert(n);
    auto [it, fresh] = names_of.try_emplace(t.impl());
    if (fresh) {
      order.push_back(t.impl());
      target[t.impl()] = t;
    }
    it->second.push_back(n);
    auto g = given.find(n);
    if (g != given.end() && g->second.sizes() != t.sizes()) {
      mismatched.push_back(n + ": checkpoint " + shape_str(g->second.sizes()) + ", model " + shape_str(t.sizes()));
    }
  }
  std::vector<std::pair<Tensor, Tensor>> copies;  // (model tensor, checkpoint tensor)
  for (const TensorImpl* impl : order) {
    const std::vector<std::string>& names = names_of[impl];
    auto src = given.end();
    for (const std::string& n : names) {
      src = given.find(n);
      if (src != given.end()) break;
    }
    if (src == given.end()) {
      missing.push_back(names.front());
    } else {
      copies.emplace_back(target[impl], src->second);
    }
  }
  for (auto& [n, _] : state)
    if (!own_names.count(n)) unexpected.push_back(n);
  if (!mismatched.empty() || (strict && (!missing.empty() || !unexpected.empty()))) {
    std::ostringstream os;
    os << "Error(s) in loading state_dict for " << name() << ":";
    auto list = [&](const char* what, const std::vector<std::string>& keys) {
      if (keys.empty()) return;
      os << "\n  " << what << ": ";
      for (size_t i = 0; i < keys.size(); ++i) os << (i ? ", " : "") << "\"" << keys[i] << "\"";
    };
    list("Missing key(s)", missing);
    list("Unexpected key(s)", unexpected);
    list("Size mismatch", mismatched);
    throw std::invalid_argument(os.str());
  }
  NoGradGuard no_grad;
  for (auto& [t, src] : copies) {
    raw::copy_(t, src);
    t.storage()->bump_version();
  }
  return {std::move(missing), std::move(unexpected)};
}

std::string Module::repr(int indent) const {
  std::ostringstream os;
  os << name() << "(" << extra_repr();
  if (!children_.empty()) {
    os << "\n";
    for (const auto& [n, c] : children_) {
      os << std::string(indent + 2, ' ') << "(" << n << "): " << c->repr(indent + 2) << "\n";
    }
    os << std::string(indent, ' ');
  }
  os << ")";
  return os.str();
}

std::ostream& operator<<(std::ostream& os, const Module& m) { return os << m.repr(); }

// ---- clone ----

namespace {

// What one clone() call (and the clones it makes of submodules) has made so far, so that what the
// original shares stays shared in the copy: source module -> its copy, source tensor -> its copy,
// and each copy's source, to catch a constructor that shares what the original does not.
struct CloneMemo {
  int depth = 0;
  std::map<const Module*, std::shared_ptr<Module>> modules;
  std::map<const Module*, const Module*> module_sources;
  std::map<const TensorImpl*, Tensor> tensors;
  std::map<const TensorImpl*, const TensorImpl*> tensor_sources;
};
thread_local CloneMemo clone_memo;

[[noreturn]] void clone_mismatch(const Module& src, const std::string& what) {
  throw std::logic_error("clone(): a new " + src.name() + ", as its constructor builds it, differs from the " +
                         src.name() + " being cloned: " + what +
                         ". A module changed after construction (a layer replaced, a weight tied) is cloned by "
                         "overriding clone_module() to build it as it is now");
}

// The copy of `src` into `dst`, a tensor of the new module (same name): new storage behind dst's
// TensorImpl, so the new module's members, which share it, see it.
void copy_tensor(const Module& owner, const std::string& name, const Tensor& src, Tensor& dst) {
  if (src.defined() != dst.defined()) {
    clone_mismatch(owner, "\"" + name + "\" is " + (src.defined() ? "defined" : "undefined") + " in the original, " +
                              (dst.defined() ? "defined" : "undefined") + " in the new one");
  }
  if (!src.defined()) return;
  CloneMemo& memo = clone_memo;
  auto done = memo.tensors.find(src.impl());
  if (done != memo.tensors.end()) {
    if (!done->second.is_same(dst)) clone_mismatch(owner, "\"" + name + "\" is shared with another name in the original only");
    return;
  }
  if (!memo.tensor_sources.emplace(dst.impl(), src.impl()).second) {
    clone_mismatch(owner, "\"" + name + "\" is shared with another name in the new one only");
  }
  if (dst.sizes() != src.sizes()) {
    clone_mismatch(owner, "\"" + name + "\" has shape " + shape_str(src.sizes()) + " in the original, " +
                              shape_str(dst.sizes()) + " in the new one");
  }
  {
    NoGradGuard no_grad;
    set_data(dst, raw::clone(src));
  }
  dst.requires_grad_(src.requires_grad());
  memo.tensors.emplace(src.impl(), dst);
}

void copy_tensors(const Module& owner, const NamedTensors& src, NamedTensors& dst) {
  auto names = [](const NamedTensors& v) {
    std::string out;
    for (const auto& [n, _] : v) out += (out.empty() ? "" : ", ") + n;
    return "[" + out + "]";
  };
  bool same = src.size() == dst.size();
  for (size_t i = 0; same && i < src.size(); ++i) same = src[i].first == dst[i].first;
  if (!same) clone_mismatch(owner, "it registers " + names(src) + ", the new one " + names(dst));
  for (size_t i = 0; i < src.size(); ++i) copy_tensor(owner, src[i].first, src[i].second, dst[i].second);
}

}  // namespace

namespace detail {
void check_clone_type(const Module& self, const std::type_info& built) {
  if (typeid(self) != built) {
    throw std::logic_error("clone(): " + self.name() + " derives from " + type_name(built) +
                           " without a clone of its own: derive it from nn::Cloneable<" + self.name() +
                           "> or write COLONY_CLONEABLE in its body");
  }
}
}  // namespace detail

std::shared_ptr<Module> Module::clone() const {
  if (auto done = cloned_already(this)) return done;
  // The outermost clone keeps the memo, and gives back the random numbers the constructors drew
  // (init:: functions draw none under the SkipInitGuard; a constructor may draw by other means).
  init::SkipInitGuard skip_init;
  struct Scope {
    Scope() : outer(clone_memo.depth++ == 0) {
      if (outer) state = {default_generator().seed(), default_generator().offset()};
    }
    ~Scope() {
      if (--clone_memo.depth > 0) return;
      clone_memo = CloneMemo();
      default_generator().set_state(state.first, state.second);
    }
    bool outer;
    std::pair<uint64_t, uint64_t> state;
  } scope;
  std::shared_ptr<Module> copy = clone_module();
  clone_memo.modules[this] = copy;
  return copy;
}

std::shared_ptr<Module> Module::clone_module() const {
  throw std::logic_error(name() + " has no clone(): derive the class from nn::Cloneable<" + name() +
                         "> or write COLONY_CLONEABLE in its body (the copy is then built by its default "
                         "constructor or from its `options` member), or override clone_module()");
}

std::shared_ptr<Module> Module::cloned_already(const Module* m) {
  auto it = clone_memo.modules.find(m);
  return it == clone_memo.modules.end() ? nullptr : it->second;
}

Tensor Module::clone_tensor(const Tensor& t) {
  if (!t.defined()) return t;
  auto done = clone_memo.tensors.find(t.impl());
  if (done != clone_memo.tensors.end()) return done->second;
  Tensor copy;
  {
    NoGradGuard no_grad;
    copy = raw::clone(t);
  }
  copy.requires_grad_(t.requires_grad());
  clone_memo.tensors.emplace(t.impl(), copy);
  return copy;
}

void Module::copy_state_from(const Module& src) {
  CloneMemo& memo = clone_memo;
  memo.modules[&src] = shared_from_this();
  memo.module_sources[this] = &src;
  training_ = src.training_;
  non_persistent_ = src.non_persistent_;
  copy_tensors(src, src.params_, params_);
  copy_tensors(src, src.buffers_, buffers_);
  bool same = src.children_.size() == children_.size();
  for (size_t i = 0; same && i < children_.size(); ++i) same = src.children_[i].first == children_[i].first;
  if (!same) {
    auto names = [](const auto& v) {
      std::string out;
      for (const auto& [n, _] : v) out += (out.empty() ? "" : ", ") + n;
      return "[" + out + "]";
    };
    clone_mismatch(src, "its submodules are " + names(src.children_) + ", the new one's " + names(children_));
  }
  for (size_t i = 0; i < children_.size(); ++i) {
    const Module& from = *src.children_[i].second;
    Module& to = *children_[i].second;
    const std::string& n = children_[i].first;
    auto done = memo.modules.find(&from);
    if (done != memo.modules.end()) {
      if (done->second.get() != &to) clone_mismatch(src, "submodule \"" + n + "\" is shared with another place in the original only");
      continue;
    }
    if (memo.module_sources.count(&to)) clone_mismatch(src, "submodule \"" + n + "\" is shared with another place in the new one only");
    if (typeid(from) != typeid(to)) {
      clone_mismatch(src, "submodule \"" + n + "\" is a " + from.name() + " in the original, a " + to.name() + " in the new one");
    }
    to.copy_state_from(from);
  }
}

}  // namespace colony::nn
