// ProcessGroupByDevice: CUDA tensors to one group, host tensors (and barriers) to the other.
#include "distributed/comm/process_group_by_device.h"

#include <gtest/gtest.h>

#include "ops/raw_ops.h"

namespace colony::dist {
namespace {

class DoneWork final : public Work {
 public:
  bool is_completed() const override { return true; }
  void wait(std::chrono::milliseconds) override {}
  std::exception_ptr exception() const override { return nullptr; }
  std::string description() const override { return ""; }
};

// Counts the calls it gets.
class CountingGroup final : public ProcessGroup {
 public:
  explicit CountingGroup(std::string name) : name_(std::move(name)) {}
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string backend_name() const override { return name_; }
  std::shared_ptr<Work> allreduce(Tensor&, ReduceOp, const CollectiveOptions&) override { return call(); }
  std::shared_ptr<Work> broadcast(Tensor&, int, const CollectiveOptions&) override { return call(); }
  std::shared_ptr<Work> allgather(std::vector<Tensor>&, const Tensor&, const CollectiveOptions&) override {
    return call();
  }
  std::shared_ptr<Work> reduce_scatter(Tensor&, const std::vector<Tensor>&, ReduceOp,
                                       const CollectiveOptions&) override {
    return call();
  }
  std::shared_ptr<Work> barrier(const CollectiveOptions&) override { return call(); }
  void abort(const std::string& reason) override { aborted = reason; }

  int calls = 0;
  std::string aborted;

 private:
  std::shared_ptr<Work> call() {
    ++calls;
    return std::make_shared<DoneWork>();
  }
  std::string name_;
};

TEST(ProcessGroupByDevice, RoutesByTheTensorsDevice) {
  auto host = std::make_shared<CountingGroup>("gloo");
  auto cuda = std::make_shared<CountingGroup>("nccl");
  ProcessGroupByDevice pg(host, cuda);
  EXPECT_EQ(pg.backend_name(), "gloo+nccl");
  float storage[4] = {0, 0, 0, 0};
  // Claims to live on a GPU; the fake groups never touch the data.
  Tensor on_gpu = raw::from_blob(storage, {4}, kFloat32, Device::cuda(0));
  Tensor on_host = raw::zeros({4});
  pg.allreduce(on_gpu);
  pg.broadcast(on_gpu, 0);
  std::vector<Tensor> outs{on_gpu};
  pg.allgather(outs, on_gpu);
  EXPECT_EQ(cuda->calls, 3);
  EXPECT_EQ(host->calls, 0);
  pg.allreduce(on_host);
  std::vector<Tensor> ins{on_host};
  pg.reduce_scatter(on_host, ins);
  pg.barrier();
  EXPECT_EQ(host->calls, 3);
  EXPECT_EQ(cuda->calls, 3);
  pg.abort("rank 1 failed");
  EXPECT_EQ(host->aborted, "rank 1 failed");
  EXPECT_EQ(cuda->aborted, "rank 1 failed");
}

}  // namespace
}  // namespace colony::dist
