// Host cost of the CUDA calls one tracker search makes, on this host (us per call).
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <vector>
struct Small { int a[4]; };
struct Big { char b[1536]; };
struct Huge { char b[4096]; };
__global__ void k_small(Small s, int* o) { if (threadIdx.x == 0 && s.a[0] == 12345) *o = 1; }
__global__ void k_big(Big s, int* o) { if (threadIdx.x == 0 && s.b[0] == 123) *o = 1; }
__global__ void k_huge(Huge s, int* o) { if (threadIdx.x == 0 && s.b[0] == 123) *o = 1; }
using clk = std::chrono::steady_clock;
static double us(clk::time_point a) { return std::chrono::duration<double, std::micro>(clk::now() - a).count(); }
#define N 2000
int main() {
  cudaFree(0);
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  int* o; cudaMalloc(&o, 4);
  cudaEvent_t e, ed, e2; cudaEventCreate(&e); cudaEventCreate(&e2); cudaEventCreateWithFlags(&ed, cudaEventDisableTiming);
  Small sm{}; Big bg{}; Huge hg{};
  for (int i = 0; i < 100; ++i) k_small<<<1, 32, 0, s>>>(sm, o);
  cudaStreamSynchronize(s);
  auto t = clk::now();
  for (int i = 0; i < N; ++i) k_small<<<1, 32, 0, s>>>(sm, o);
  double a = us(t) / N; cudaStreamSynchronize(s);
  t = clk::now(); for (int i = 0; i < N; ++i) k_big<<<1, 32, 0, s>>>(bg, o);
  double b = us(t) / N; cudaStreamSynchronize(s);
  t = clk::now(); for (int i = 0; i < N; ++i) k_huge<<<1, 32, 0, s>>>(hg, o);
  double c = us(t) / N; cudaStreamSynchronize(s);
  t = clk::now(); for (int i = 0; i < N; ++i) cudaGetLastError();
  double gle = us(t) / N;
  t = clk::now(); for (int i = 0; i < N; ++i) cudaEventRecord(e, s);
  double er = us(t) / N; cudaStreamSynchronize(s);
  t = clk::now(); for (int i = 0; i < N; ++i) cudaEventRecord(ed, s);
  double erd = us(t) / N; cudaStreamSynchronize(s);
  cudaEventRecord(e, s); cudaEventRecord(e2, s); cudaStreamSynchronize(s);
  float ms; t = clk::now(); for (int i = 0; i < N; ++i) cudaEventElapsedTime(&ms, e, e2);
  double el = us(t) / N;
  std::printf("launch small %.2f, 1.5KB params %.2f, 4KB params %.2f, GetLastError %.2f, EventRecord timing %.2f, no-timing %.2f, ElapsedTime %.2f\n", a, b, c, gle, er, erd, el);
  // round trip: launch + event record + sync
  double rt = 0, rt2 = 0, rt3 = 0;
  for (int i = 0; i < N; ++i) { t = clk::now(); k_small<<<1, 32, 0, s>>>(sm, o); cudaEventRecord(ed, s); cudaEventSynchronize(ed); rt += us(t); }
  for (int i = 0; i < N; ++i) { t = clk::now(); k_small<<<1, 32, 0, s>>>(sm, o); cudaEventRecord(ed, s); while (cudaEventQuery(ed) == cudaErrorNotReady) {} rt2 += us(t); }
  for (int i = 0; i < N; ++i) { t = clk::now(); for (int j = 0; j < 8; ++j) k_small<<<1, 32, 0, s>>>(sm, o); cudaEventRecord(ed, s); cudaEventSynchronize(ed); rt3 += us(t); }
  std::printf("round trip 1 kernel + sync %.2f, + spin query %.2f, 8 kernels + sync %.2f\n", rt / N, rt2 / N, rt3 / N);
  // graph of 8 kernels
  cudaGraph_t g; cudaGraphExec_t ge;
  cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
  for (int j = 0; j < 8; ++j) k_small<<<1, 32, 0, s>>>(sm, o);
  cudaStreamEndCapture(s, &g); cudaGraphInstantiate(&ge, g, 0);
  double gl = 0, glr = 0;
  for (int i = 0; i < 100; ++i) cudaGraphLaunch(ge, s);
  cudaStreamSynchronize(s);
  t = clk::now(); for (int i = 0; i < N; ++i) cudaGraphLaunch(ge, s); gl = us(t) / N; cudaStreamSynchronize(s);
  for (int i = 0; i < N; ++i) { t = clk::now(); cudaGraphLaunch(ge, s); cudaEventRecord(ed, s); cudaEventSynchronize(ed); glr += us(t); }
  std::printf("graph(8) launch %.2f, graph(8) + sync %.2f\n", gl, glr / N);
  // copies: 360 rows x 640 pinned, 2D into pitch 704 vs 1D contiguous
  for (int rows : {64, 360, 1080}) {
    int w = rows == 1080 ? 1920 : 640; size_t dp = (w + 511) / 512 * 512;
    unsigned char *h, *d, *d1; cudaHostAlloc(&h, (size_t)w * rows, 0); cudaMalloc(&d, dp * rows); cudaMalloc(&d1, (size_t)w * rows);
    double c2 = 0, c1 = 0, c2r = 0, c1r = 0;
    for (int i = 0; i < 500; ++i) { t = clk::now(); cudaMemcpy2DAsync(d, dp, h, w, w, rows, cudaMemcpyHostToDevice, s); c2 += us(t); cudaStreamSynchronize(s); }
    for (int i = 0; i < 500; ++i) { t = clk::now(); cudaMemcpyAsync(d1, h, (size_t)w * rows, cudaMemcpyHostToDevice, s); c1 += us(t); cudaStreamSynchronize(s); }
    for (int i = 0; i < 500; ++i) { t = clk::now(); cudaMemcpy2DAsync(d, dp, h, w, w, rows, cudaMemcpyHostToDevice, s); cudaStreamSynchronize(s); c2r += us(t); }
    for (int i = 0; i < 500; ++i) { t = clk::now(); cudaMemcpyAsync(d1, h, (size_t)w * rows, cudaMemcpyHostToDevice, s); cudaStreamSynchronize(s); c1r += us(t); }
    std::printf("copy %dx%d pinned: 2D (pitch %zu) enqueue %.2f / +sync %.2f; 1D enqueue %.2f / +sync %.2f\n", w, rows, dp, c2 / 500, c2r / 500, c1 / 500, c1r / 500);
    cudaFreeHost(h); cudaFree(d); cudaFree(d1);
  }
  // pinned->device param block copy (1 KB) then kernel reading it
  return 0;
}
