// Host cost of replaying one search as a CUDA graph when its kernel arguments change every
// frame (us per search of 8 small kernels + its wait), on this host. Compares: plain launches;
// capture + instantiate; capture + cudaGraphExecUpdate of a kept exec; kernel-node parameter
// updates (cudaGraphExecKernelNodeSetParams) on a kept exec without a capture.
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
struct Item { int a[8]; };
__global__ void k_item(Item s, int* o) { if (threadIdx.x == 0 && s.a[0] == 12345) *o = s.a[1]; }
using clk = std::chrono::steady_clock;
static double us(clk::time_point a) { return std::chrono::duration<double, std::micro>(clk::now() - a).count(); }
#define N 2000
#define K 8
static void enqueue(cudaStream_t s, int* o, int frame) {
  for (int j = 0; j < K; ++j) { Item it{}; it.a[1] = frame + j; k_item<<<4, 128, 0, s>>>(it, o); }
}
int main() {
  cudaFree(0);
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  int* o; cudaMalloc(&o, 4);
  cudaEvent_t ed; cudaEventCreateWithFlags(&ed, cudaEventDisableTiming);
  for (int i = 0; i < 200; ++i) enqueue(s, o, i);
  cudaStreamSynchronize(s);
  double plain = 0, inst = 0, upd = 0, setp = 0, cap = 0, updonly = 0;
  for (int i = 0; i < N; ++i) { auto t = clk::now(); enqueue(s, o, i); cudaEventRecord(ed, s); cudaEventSynchronize(ed); plain += us(t); }
  for (int i = 0; i < N / 4; ++i) {
    auto t = clk::now();
    cudaGraph_t g; cudaGraphExec_t ge;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal); enqueue(s, o, i); cudaStreamEndCapture(s, &g);
    cudaGraphInstantiate(&ge, g, 0); cudaGraphLaunch(ge, s); cudaEventRecord(ed, s); cudaEventSynchronize(ed);
    inst += us(t); cudaGraphExecDestroy(ge); cudaGraphDestroy(g);
  }
  cudaGraph_t g0; cudaGraphExec_t ge;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal); enqueue(s, o, 0); cudaStreamEndCapture(s, &g0);
  cudaGraphInstantiate(&ge, g0, 0);
  int fails = 0;
  for (int i = 0; i < N; ++i) {
    auto t = clk::now();
    cudaGraph_t g;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal); enqueue(s, o, i); cudaStreamEndCapture(s, &g);
    double c = us(t);
    cudaGraphExecUpdateResultInfo info;
    if (cudaGraphExecUpdate(ge, g, &info) != cudaSuccess) ++fails;
    double u = us(t) - c;
    cudaGraphLaunch(ge, s); cudaEventRecord(ed, s); cudaEventSynchronize(ed);
    upd += us(t); cap += c; updonly += u; cudaGraphDestroy(g);
  }
  // Node parameter updates on the kept exec (no capture): what a graph with stable nodes costs.
  size_t n = 0; cudaGraphGetNodes(g0, nullptr, &n);
  cudaGraphNode_t nodes[64]; cudaGraphGetNodes(g0, nodes, &n);
  for (int i = 0; i < N; ++i) {
    auto t = clk::now();
    for (size_t j = 0; j < n; ++j) {
      Item it{}; it.a[1] = i + (int)j; void* args[] = {&it, &o};
      cudaKernelNodeParams p{}; p.func = (void*)k_item; p.gridDim = dim3(4); p.blockDim = dim3(128); p.kernelParams = args;
      cudaGraphExecKernelNodeSetParams(ge, nodes[j], &p);
    }
    cudaGraphLaunch(ge, s); cudaEventRecord(ed, s); cudaEventSynchronize(ed);
    setp += us(t);
  }
  std::printf("search of %d kernels + wait, us: plain %.2f | capture+instantiate %.2f | capture %.2f + exec update %.2f, total with launch+wait %.2f (%d update failures) | node SetParams + launch + wait %.2f\n",
              K, plain / N, inst / (N / 4), cap / N, updonly / N, upd / N, fails, setp / N);
  return 0;
}
